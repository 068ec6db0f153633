-- Take the next message off the first non-empty queue key AND record it as unacked,
-- in one step, so no moment exists in which a message is in neither place.
-- (kombu's BRPOP pops first and records afterwards, from the client: a worker killed,
-- or a Redis restarted, between the two loses the message.)
-- KEYS[1] unacked hash, KEYS[2] unacked index (zset), KEYS[3..n] queue keys in order.
-- ARGV[1] now (the client's clock, as kombu's own unacked index uses); the fair pop:
-- ARGV[2] its key prefix (core.redis_keys.FAIR_QUEUE_PREFIX; absent: no fair pop),
-- ARGV[3] the tenant header's name, ARGV[4] the tenants' weights (a JSON object, `*`
-- for every tenant it does not name; 1 otherwise), ARGV[5] the most messages a pop sets
-- aside.
-- Returns {queue key, message} or nil when every queue is empty. A message that is
-- not a kombu envelope is returned unrecorded: kombu refuses it as it would today.
--
-- The fair pop (issue 18): a queue is first come, first served, so one tenant's burst
-- of thousands of jobs would hold another tenant's few until it has all run. Once a
-- message naming a tenant reaches the head of a queue, the pop sets the oldest
-- messages aside, a list per tenant (`` for those without one), and serves the
-- tenants with messages set aside in turn, by weight (stride scheduling: the tenant
-- with the lowest pass is next, and its pass grows by 1 / weight; a tenant that comes
-- back starts at the pass last served, so waiting earns no credit). Each message is set
-- aside once, at most ARGV[5] of them per pop. A queue no tenant's message has reached
-- pops as before (one plain find in the message more).
local prefix = (ARGV[2] and ARGV[2] ~= '') and ARGV[2] or nil
local needle = ARGV[3] and ('"' .. ARGV[3] .. '"') or nil
local set_aside = tonumber(ARGV[5]) or 0
local weights = nil

local function tenant_of(message)
  return string.match(message, needle .. '%s*:%s*"([a-z0-9_-]+)"') or ''
end

local function weight_of(tenant)
  if weights == nil then
    local ok, decoded = pcall(cjson.decode, ARGV[4] or '{}')
    weights = (ok and type(decoded) == 'table') and decoded or {}
  end
  local weight = tonumber(weights[tenant]) or (tenant ~= '' and tonumber(weights['*'])) or 1
  if weight <= 0 then
    weight = 1
  end
  return weight
end

local function fair_pop(queue)
  local active = prefix .. queue .. ':active'
  local state = prefix .. queue .. ':state'
  local lists = prefix .. queue .. ':t:'
  local move = math.min(math.max(1, set_aside), redis.call('LLEN', queue))
  if move > 0 then
    local seen = {}
    for _ = 1, move do
      local message = redis.call('RPOP', queue)
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
    local list = lists .. tenant
    local message = redis.call('RPOP', list)
    redis.call('HSET', state, 'pass', pass)
    if message == false or redis.call('LLEN', list) == 0 then
      redis.call('ZREM', active, tenant)
    else
      redis.call('ZADD', active, pass + 1 / weight_of(tenant), tenant)
    end
    if message then
      return message
    end
  end
end

for i = 3, #KEYS do
  local queue = KEYS[i]
  local message
  if prefix and redis.call('EXISTS', prefix .. queue .. ':active') == 1 then
    message = fair_pop(queue)
  else
    message = redis.call('RPOP', queue)
    if message and prefix and string.find(message, needle, 1, true) then
      redis.call('RPUSH', queue, message) -- back where it was, the oldest
      message = fair_pop(queue)
    end
  end
  if message then
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
    return {KEYS[i], message}
  end
end
return nil
