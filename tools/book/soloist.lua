--[[ soloist.lua: the book's pandoc filter (tools/book/build.py runs it).

One of the reader's tools. It turns citations into code:

  `src/resp.c@parse-bulk`           inline: a link to the cited lines in
                                     the source listing page
  ```                               a fenced block holding only a citation:
  src/resp.c@parse-bulk             the cited lines, numbered as in the
  ```                               file, under a "file, lines" header
  `valkey:src/io_threads.c:514-530` inline: a link to GitHub at the pin
  a fenced block of the same        the lines with their numbers when the
                                     source is on this machine, else where
                                     to read them (tools/pinned-source.py)

It also takes the first level-1 heading as the page title, rewrites links
to other markdown files of the book to their pages, and links to .dot
figures to the rendered .svg. build.py resolves every citation beforehand
and hands the answers over in a Lua table (metadata `soloist-data`), so
this filter never runs a program. An unresolved citation becomes a visible
"cite-missing" box that `make book-check` fails on.
]]

local DATA = { cites = {}, pages = {} }
local DOC = ""

local function trim(s)
  return (s:gsub("^%s+", ""):gsub("%s+$", ""))
end

local function dirname(p)
  return p:match("^(.*)/[^/]*$") or ""
end

local function normalize(p)
  local out = {}
  for part in p:gmatch("[^/]+") do
    if part == ".." then
      if #out > 0 then table.remove(out) else return nil end
    elseif part ~= "." then
      table.insert(out, part)
    end
  end
  return table.concat(out, "/")
end

local function warn(msg)
  io.stderr:write("book: " .. DOC .. ": " .. msg .. "\n")
end

local function read_meta(meta)
  if meta["soloist-data"] then
    DATA = dofile(pandoc.utils.stringify(meta["soloist-data"]))
  end
  if meta["soloist-doc"] then
    DOC = pandoc.utils.stringify(meta["soloist-doc"])
  end
  return nil
end

local function missing_box(text, why)
  warn("unresolved citation " .. text .. ": " .. why)
  return pandoc.Div({ pandoc.Para({ pandoc.Strong({ pandoc.Str("Unresolved citation") }), pandoc.Space(),
    pandoc.Code(text), pandoc.Str(": " .. why) }) }, pandoc.Attr("", { "cite-missing" }))
end

local function numbered(c, id)
  return pandoc.CodeBlock(c.text, pandoc.Attr(id, { "c", "numberLines" }, { { "startFrom", tostring(c.first) } }))
end

local block_count = 0

local function cite_block(text)
  local c = DATA.cites[text]
  if c == nil then return nil end
  block_count = block_count + 1
  local id = "cite-" .. block_count
  if c.error then
    return missing_box(text, c.error)
  end
  if c.kind == "label" then
    local head = pandoc.Para({
      pandoc.Link({ pandoc.Code(c.path) }, c.href, c.path .. " lines " .. c.first .. "-" .. c.last),
      pandoc.Str(", lines " .. c.first .. "–" .. c.last), pandoc.Space(),
      pandoc.Span({ pandoc.Str("@" .. c.name) }, pandoc.Attr("", { "cite-label" })) })
    return pandoc.Div({ head, numbered(c, id) }, pandoc.Attr("", { "cite", "cite-soloist" }))
  end
  -- upstream
  local head = pandoc.Para({
    pandoc.Link({ pandoc.Str(c.repo .. "@" .. c.sha), pandoc.Space(), pandoc.Code(c.path) }, c.url),
    pandoc.Str(", lines " .. c.first .. "–" .. c.last) })
  if c.text then
    return pandoc.Div({ head, numbered(c, id) }, pandoc.Attr("", { "cite", "cite-upstream" }))
  end
  local body = { head, pandoc.Para({ pandoc.Str("The source is not on this machine, so the lines are not shown; read them with"),
    pandoc.Space(), pandoc.Code(c.command), pandoc.Str(".") }) }
  if c.checked then
    table.insert(body, pandoc.Para({ pandoc.Emph({ pandoc.Str(c.checked) }) }))
  elseif c.unchecked then
    table.insert(body, pandoc.Para({ pandoc.Strong({ pandoc.Str(c.unchecked) }) }))
  end
  if c.locked_first then
    table.insert(body, pandoc.Para({ pandoc.Str("First line, as the lock file records it:"), pandoc.Space(),
      pandoc.Code(c.locked_first) }))
  end
  return pandoc.Div(body, pandoc.Attr("", { "cite", "cite-upstream", "cite-offline" }))
end

local function CodeBlock(el)
  local text = trim(el.text)
  if text:find("\n") then return nil end
  return cite_block(text)
end

local function Code(el)
  local text = trim(el.text)
  local c = DATA.cites[text]
  if c == nil then return nil end
  if c.error then
    warn("unresolved citation " .. text .. ": " .. c.error)
    return pandoc.Span({ pandoc.Code(text) }, pandoc.Attr("", { "cite-missing" }, { { "title", c.error } }))
  end
  if c.kind == "label" then
    return pandoc.Link({ pandoc.Code(text) }, c.href, c.path .. " lines " .. c.first .. "-" .. c.last,
      pandoc.Attr("", { "cite" }))
  end
  -- inline: the link's title says how far the lines were checked; a
  -- citation no copy confirmed says so in the text, not only on hover
  local state = c.checked or c.unchecked or ""
  local link = pandoc.Link({ pandoc.Code(text) }, c.url, c.repo .. "@" .. c.sha .. " " .. c.path .. ". " .. state,
    pandoc.Attr("", { "cite", "cite-upstream" }))
  if c.unchecked or c.partly then
    return pandoc.Span({ link, pandoc.Superscript({ pandoc.Str(c.unchecked and " (unchecked)" or " (partly checked)") }) },
      pandoc.Attr("", { "cite-unchecked" }, { { "title", state } }))
  end
  return link
end

local function rewrite(target)
  if target:match("^%a[%w+.-]*:") or target:sub(1, 1) == "#" or target:sub(1, 1) == "/" then
    return nil
  end
  local path, frag = target:match("^([^#]*)(#?.*)$")
  if path == "" then return nil end
  local repo_path = normalize((dirname(DOC) ~= "" and (dirname(DOC) .. "/") or "") .. path)
  if repo_path == nil then return nil end
  local page = DATA.pages[repo_path]
  if page then return page .. frag end
  if repo_path:match("%.dot$") then
    return "figures/" .. repo_path:match("([^/]+)%.dot$") .. ".svg" .. frag
  end
  return nil
end

local function Link(el)
  local t = rewrite(el.target)
  if t then el.target = t; return el end
  return nil
end

local function Image(el)
  local t = rewrite(el.src)
  if t then el.src = t; return el end
  return nil
end

-- ::: fine-print … ::: : the qualifications of the main line, folded so a
-- first reading can pass them by (tools/readability.py leaves them out).
local function Div(el)
  if not el.classes:includes("fine-print") then return nil end
  local blocks = { pandoc.RawBlock("html", '<details class="fine-print"><summary>Fine print</summary>') }
  for _, b in ipairs(el.content) do table.insert(blocks, b) end
  table.insert(blocks, pandoc.RawBlock("html", "</details>"))
  return blocks
end

local function Pandoc(doc)
  local first = doc.blocks[1]
  if first and first.t == "Header" and first.level == 1 then
    local text = pandoc.utils.stringify(first.content)
    if doc.meta.title == nil or pandoc.utils.stringify(doc.meta.title) == text then
      -- the heading becomes the page title; its id stays, so links to it land
      doc.meta.title = pandoc.MetaInlines(first.content)
      doc.blocks[1] = pandoc.Div({}, pandoc.Attr(first.identifier))
    end
  end
  return doc
end

return {
  { Meta = read_meta },
  { CodeBlock = CodeBlock, Code = Code, Link = Link, Image = Image, Div = Div },
  { Pandoc = Pandoc },
}
