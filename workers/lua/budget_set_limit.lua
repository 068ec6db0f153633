-- Set each scope's token limit once (a re-delivered job does not reset it).
-- KEYS[i] scope hash, ARGV[i] its limit; ARGV[#KEYS + i] its ttl in seconds (or one ttl
-- for every scope, ARGV[#KEYS + 1]).
-- Returns how many scopes got their limit from this call.
local n = #KEYS
local newly = 0
for i, key in ipairs(KEYS) do
  local ttl = ARGV[n + i] or ARGV[n + 1]
  if redis.call('HSETNX', key, 'limit', ARGV[i]) == 1 then
    redis.call('EXPIRE', key, ttl)
    newly = newly + 1
  elseif redis.call('TTL', key) == -1 then
    redis.call('EXPIRE', key, ttl)
  end
end
return newly
