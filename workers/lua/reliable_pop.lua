-- Take the next message off the queues AND record it as unacked, in one step, so no
-- moment exists in which a message is in neither place.
-- (kombu's BRPOP pops first and records afterwards, from the client: a worker killed,
-- or a Redis restarted, between the two loses the message.)
-- KEYS[1] unacked hash, KEYS[2] unacked index (zset), then four keys per queue, the
--   queues in the order to try them: the queue's turn (a string), its high, normal
--   and low lists.
-- ARGV[1] now (the client's clock, as kombu's own unacked index uses).
-- ARGV[2] the schedule: one digit per turn, 1 high, 2 normal, 3 low (core.queue's
--   PRIORITY_SCHEDULE, "1211213121": 6 high, 3 normal, 1 low in every 10).
-- ARGV[3] the fair pop's key prefix (core.redis_keys.FAIR_QUEUE_PREFIX; empty: no fair
--   pop), ARGV[4] the tenant header's name, ARGV[5] the tenants' weights (a JSON object,
--   `*` for every tenant it does not name; 1 otherwise), ARGV[6] the most messages a pop
--   sets aside.
-- Returns {list key, message} or nil when every list is empty. A message that is not
-- a kombu envelope is returned unrecorded: kombu refuses it as it would today.
--
-- Priorities: while two or more of a queue's levels have work, its turn names the
-- level it serves next, and an empty level gives its turn to the highest one with
-- work; the turn moves on with each job taken that way, and it lives in Redis: the
-- share holds for the whole fleet, not for each worker alone. A queue with one level
-- waiting (nearly always the normal list) is popped without reading or moving the
-- turn.
--
-- Tenants (the fair pop): a list is first come, first served, so one tenant's burst of
-- thousands of jobs would hold another tenant's few until it has all run. Once a
-- message naming a tenant reaches the head of a list, the pop sets the oldest messages
-- aside, a list per tenant (`` for those without one), and serves the tenants with
-- messages set aside in turn, by weight (stride scheduling: the tenant with the lowest
-- pass is next, and its pass grows by 1 / weight; a tenant that comes back starts at
-- the pass last served, so waiting earns no credit). Each message is set aside once, at
-- most ARGV[6] of them per pop. Fairness is per list: a priority level's order between
-- tenants, never across levels. A list no tenant's message has reached pops as before
-- (one plain find in the message more).
local schedule = ARGV[2]
local period = #schedule
local prefix = (ARGV[3] and ARGV[3] ~= '') and ARGV[3] or nil
local needle = ARGV[4] and ('"' .. ARGV[4] .. '"') or nil
local set_aside = tonumber(ARGV[6]) or 0
local weights = nil

local function tenant_of(message)
  return string.match(message, needle .. '%s*:%s*"([a-z0-9_-]+)"') or ''
end

local function weight_of(tenant)
  if weights == nil then
    local ok, decoded = pcall(cjson.decode, ARGV[5] or '{}')
    weights = (ok and type(decoded) == 'table') and decoded or {}
  end
  local weight = tonumber(weights[tenant]) or (tenant ~= '' and tonumber(weights['*'])) or 1
  if weight <= 0 then
    weight = 1
  end
  return weight
end

local function fair_pop(list)
  local active = prefix .. list .. ':active'
  local state = prefix .. list .. ':state'
  local lists = prefix .. list .. ':t:'
  local move = math.min(math.max(1, set_aside), redis.call('LLEN', list))
  if move > 0 then
    local seen = {}
    for _ = 1, move do
      local message = redis.call('RPOP', list)
      local tenant = string.find(message, needle, 1, true) and tenant_of(message) or ''
      redis.call('LPUSH', lists .. tenant, message)
      seen[tenant] = true
    end
    local pass = tonumber(redis.call('HGET', state, 'pass')) or 0
    for tenant in pairs(seen) do
      redis.call('ZADD', active, 'NX', pass, tenant)
    end
  end
  while true do
    local first = redis.call('ZRANGE', active, 0, 0, 'WITHSCORES')
    if #first == 0 then
      return nil
    end
    local tenant, pass = first[1], tonumber(first[2])
    local aside = lists .. tenant
    local message = redis.call('RPOP', aside)
    redis.call('HSET', state, 'pass', pass)
    if message == false or redis.call('LLEN', aside) == 0 then
      redis.call('ZREM', active, tenant)
    else
      redis.call('ZADD', active, pass + 1 / weight_of(tenant), tenant)
    end
    if message then
      return message
    end
  end
end

-- The next message of one list: the fair pop's once tenants are set aside for it.
local function take(list)
  if prefix and redis.call('EXISTS', prefix .. list .. ':active') == 1 then
    return fair_pop(list)
  end
  local message = redis.call('RPOP', list)
  if message and prefix and string.find(message, needle, 1, true) then
    redis.call('RPUSH', list, message) -- back where it was, the oldest
    message = fair_pop(list)
  end
  return message
end

for base = 3, #KEYS, 4 do
  local waiting = redis.call('EXISTS', KEYS[base + 1], KEYS[base + 2], KEYS[base + 3])
  if prefix then -- messages set aside count as work of their level
    waiting = waiting + redis.call('EXISTS', prefix .. KEYS[base + 1] .. ':active',
      prefix .. KEYS[base + 2] .. ':active', prefix .. KEYS[base + 3] .. ':active')
  end
  local key, message, turn = nil, nil, nil
  if waiting == 1 then
    for _, level in ipairs({2, 1, 3}) do
      key = KEYS[base + level]
      message = take(key)
      if message then break end
    end
  elseif waiting > 1 then
    turn = (tonumber(redis.call('GET', KEYS[base])) or 0) % period
    local first = tonumber(string.sub(schedule, turn + 1, turn + 1))
    key = KEYS[base + first]
    message = take(key)
    local level = 1
    while not message and level <= 3 do
      if level ~= first then
        key = KEYS[base + level]
        message = take(key)
      end
      level = level + 1
    end
  end
  if message then
    if turn then
      redis.call('SET', KEYS[base], (turn + 1) % period)
    end
    local ok, payload = pcall(cjson.decode, message)
    local properties = ok and type(payload) == 'table' and payload['properties']
    local tag = type(properties) == 'table' and properties['delivery_tag']
    local info = type(properties) == 'table' and properties['delivery_info']
    if type(tag) == 'string' and type(info) == 'table' then
      -- The stored entry is kombu's own format, [message, exchange, routing_key];
      -- the message is spliced in as sent, never re-encoded.
      local entry = '[' .. message .. ',' .. cjson.encode(info['exchange'] or '') .. ','
        .. cjson.encode(info['routing_key'] or '') .. ']'
      redis.call('HSET', KEYS[1], tag, entry)
      redis.call('ZADD', KEYS[2], ARGV[1], tag)
    end
    return {key, message}
  end
end
return nil
