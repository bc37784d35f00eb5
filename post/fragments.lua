-- Pandoc filter: show the named fragments of a literate program the way the
-- pbrt book does. A code block {.cpp chunk="Name"} gets a caption above it,
-- "⟨Name⟩ ≡" where it is first defined and "⟨Name⟩ +≡" where a later block
-- continues it; a line <<Name>> inside a block becomes a link, ⟨Name⟩, to
-- the fragment's first definition, and each caption says where the fragment
-- is used. tangle.py reads the same syntax.

local first = {}     -- name -> id of its first definition
local users = {}     -- name -> list of {id, name} of the blocks that use it
local seen = {}      -- name -> true once its first definition has been shown
local count = 0

local function slug(name)
  return "fragment-" .. name:lower():gsub("[^%w]+", "-"):gsub("^-+", ""):gsub("-+$", "")
end

local function references(text)
  local found = {}
  for line in (text .. "\n"):gmatch("(.-)\n") do
    local name = line:match("^%s*<<(.-)>>%s*$")
    if name then table.insert(found, (name:gsub("^%s+", ""):gsub("%s+$", ""))) end
  end
  return found
end

local function escape(s)
  return (s:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"):gsub('"', "&quot;"))
end

-- First pass: where each fragment is defined, and who uses it.
local function collect(block)
  if not block.classes:includes("cpp") then return nil end
  count = count + 1
  local name = block.attributes["chunk"]
  local id = "code-" .. count
  if name and not first[name] then first[name] = slug(name) end
  block.attributes["data-block"] = id
  for _, used in ipairs(references(block.text)) do
    users[used] = users[used] or {}
    table.insert(users[used], {first[name] or id, name})
  end
  return block
end

-- Second pass: captions, and references turned into links.
local function render(block)
  if not block.classes:includes("cpp") then return nil end
  local name = block.attributes["chunk"]
  local placeholders, n = {}, 0
  local text = block.text:gsub("([^\n]*)", function(line)
    local indent, used = line:match("^(%s*)<<(.-)>>%s*$")
    if not used then return line end
    used = used:gsub("^%s+", ""):gsub("%s+$", "")
    n = n + 1
    local key = "FRAGMENTREF" .. n .. "X"
    placeholders[key] = used
    return indent .. key
  end)
  local own = block.attributes["data-block"]
  local code = pandoc.CodeBlock(text, pandoc.Attr("src-" .. own, {"cpp"}))
  local html = pandoc.write(pandoc.Pandoc({code}), "html")
  html = html:gsub("FRAGMENTREF%d+X", function(key)
    local used = placeholders[key]
    local target = first[used] and ("#" .. first[used]) or "#"
    return '<a class="fragment-ref" href="' .. target .. '">⟨' .. escape(used) .. '⟩</a>'
  end)
  if not name then
    return pandoc.RawBlock("html", '<div class="fragment" id="' .. own .. '">' .. html .. '</div>')
  end
  local continued = seen[name]
  seen[name] = true
  local where = {}
  for _, user in ipairs(users[name] or {}) do
    local label = user[2] and ("⟨" .. escape(user[2]) .. "⟩") or "the program"
    table.insert(where, '<a href="#' .. user[1] .. '">' .. label .. '</a>')
  end
  local caption = '<div class="fragment-name">'
  if continued then
    caption = caption .. '<a href="#' .. first[name] .. '">⟨' .. escape(name) .. '⟩</a> +≡'
  else
    caption = caption .. '⟨' .. escape(name) .. '⟩ ≡'
  end
  if #where > 0 and not continued then
    caption = caption .. '<span class="fragment-used">used in ' .. table.concat(where, ", ") .. '</span>'
  end
  caption = caption .. '</div>'
  local id = continued and "" or (' id="' .. first[name] .. '"')
  return pandoc.RawBlock("html", '<div class="fragment"' .. id .. '>' .. caption .. html .. '</div>')
end

return {{CodeBlock = collect}, {CodeBlock = render}}
