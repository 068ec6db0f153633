-- Reserve tokens on every scope at once, or on none, under a lease.
-- KEYS[1] reservation hash; KEYS[2..n+1] scope hashes (fields limit, spent, reserved,
-- and r:<id> = tokens of each reservation still held on the scope);
-- KEYS[n+2..2n+1] the scopes' lease sorted sets (reservation id, scored by the lease's
-- deadline in ms of Redis TIME), in the same order.
-- ARGV[1] tokens, ARGV[2] reservation ttl s, ARGV[3] ttl s for a scope hash that has none
-- (a scope without a limit is not checked, only tracked), ARGV[4] lease ms, ARGV[5] reservation id.
-- Before checking, each scope gives back the tokens of reservations whose lease ran out
-- (their worker died mid-call): nobody else would ever release them.
-- Returns 1 reserved, 0 does not fit (nothing reserved), -1 reservation id already used.
-- include: lease_sweep
local tokens = tonumber(ARGV[1])
local lease_ms = tonumber(ARGV[4])
local id = ARGV[5]
local n = (#KEYS - 1) / 2
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

for i = 2, n + 1 do
  local scope, leases = KEYS[i], KEYS[i + n]
  give_back_expired_leases(scope, leases, now)
end

if redis.call('EXISTS', KEYS[1]) == 1 then
  return -1
end
for i = 2, n + 1 do
  local v = redis.call('HMGET', KEYS[i], 'limit', 'spent', 'reserved')
  if v[1] then
    local left = tonumber(v[1]) - (tonumber(v[2]) or 0) - (tonumber(v[3]) or 0)
    if left < tokens then
      return 0
    end
  end
end
local deadline = now + lease_ms
local scopes, leases = {}, {}
for i = 2, n + 1 do
  local scope, lease = KEYS[i], KEYS[i + n]
  redis.call('HINCRBY', scope, 'reserved', tokens)
  redis.call('HSET', scope, 'r:' .. id, tokens)
  if redis.call('TTL', scope) == -1 then
    redis.call('EXPIRE', scope, ARGV[3])
  end
  redis.call('ZADD', lease, deadline, id)
  -- the lease set lives as long as its scope (at least one lease past now)
  redis.call('PEXPIRE', lease, math.max(redis.call('PTTL', scope), lease_ms + 1000))
  scopes[#scopes + 1] = scope
  leases[#leases + 1] = lease
end
redis.call('HSET', KEYS[1], 'state', 'reserved', 'tokens', tokens, 'scopes', cjson.encode(scopes),
  'leases', cjson.encode(leases), 'lease_until_ms', deadline)
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
