-- A shared cooldown that only ever grows. KEYS[1] cooldown key; ARGV[1] ms.
-- Returns the cooldown left afterwards, in ms (0 when none).
local ms = tonumber(ARGV[1])
local left = redis.call('PTTL', KEYS[1])
if ms > 0 and left < ms then
  redis.call('SET', KEYS[1], '1', 'PX', ms)
  return ms
end
if left < 0 then
  return 0
end
return left
