-- Reserve tokens on every scope at once, or on none.
-- KEYS[1] reservation hash, KEYS[2..n] scope hashes (fields limit, spent, reserved).
-- ARGV[1] tokens, ARGV[2] reservation ttl s, ARGV[3] ttl s for a scope hash that has none
-- (a scope without a limit is not checked, only tracked).
-- Returns 1 reserved, 0 does not fit (nothing changed), -1 reservation id already used.
local tokens = tonumber(ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 1 then
  return -1
end
for i = 2, #KEYS do
  local v = redis.call('HMGET', KEYS[i], 'limit', 'spent', 'reserved')
  if v[1] then
    local left = tonumber(v[1]) - (tonumber(v[2]) or 0) - (tonumber(v[3]) or 0)
    if left < tokens then
      return 0
    end
  end
end
local scopes = {}
for i = 2, #KEYS do
  redis.call('HINCRBY', KEYS[i], 'reserved', tokens)
  if redis.call('TTL', KEYS[i]) == -1 then
    redis.call('EXPIRE', KEYS[i], ARGV[3])
  end
  scopes[#scopes + 1] = KEYS[i]
end
redis.call('HSET', KEYS[1], 'state', 'reserved', 'tokens', tokens, 'scopes', cjson.encode(scopes))
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
