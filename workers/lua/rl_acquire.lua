-- Fleet-wide sliding-window admission for one provider:model (atomic).
-- KEYS[1] window zset (member = entry id, score = ms), KEYS[2] hash entry id -> tokens,
-- KEYS[3] cooldown key (its PTTL is the time left).
-- ARGV[1] rpm (0 = none), ARGV[2] tpm (0 = none), ARGV[3] estimated tokens,
-- ARGV[4] window length in ms, ARGV[5] entry id.
-- Returns 0 when admitted (entry recorded), else the wait in whole ms (>= 1).
local rpm = tonumber(ARGV[1])
local tpm = tonumber(ARGV[2])
local est = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local entry = ARGV[5]

local cooldown = redis.call('PTTL', KEYS[3])
if cooldown > 0 then
  return cooldown
end
if rpm <= 0 and tpm <= 0 then
  return 0
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local cutoff = now - window

local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff)
if #expired > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff)
  for i = 1, #expired, 1000 do
    redis.call('HDEL', KEYS[2], unpack(expired, i, math.min(i + 999, #expired)))
  end
end

local wait = 0
local count = redis.call('ZCARD', KEYS[1])
if rpm > 0 and count >= rpm then
  -- the (count - rpm + 1)-th oldest entry must leave the window first
  local oldest = redis.call('ZRANGE', KEYS[1], count - rpm, count - rpm, 'WITHSCORES')
  wait = math.max(wait, tonumber(oldest[2]) + window - now)
end
if tpm > 0 then
  if est > tpm then
    wait = math.max(wait, window)
  else
    local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
    local raw = redis.call('HGETALL', KEYS[2])
    local tokens = {}
    for i = 1, #raw, 2 do
      tokens[raw[i]] = tonumber(raw[i + 1]) or 0
    end
    local used = 0
    for i = 1, #entries, 2 do
      used = used + (tokens[entries[i]] or 0)
    end
    if used + est > tpm then
      for i = 1, #entries, 2 do
        used = used - (tokens[entries[i]] or 0)
        if used + est <= tpm then
          wait = math.max(wait, tonumber(entries[i + 1]) + window - now)
          break
        end
      end
    end
  end
end

if wait > 0 then
  return math.max(1, math.ceil(wait))
end

redis.call('ZADD', KEYS[1], now, entry)
redis.call('HSET', KEYS[2], entry, est)
redis.call('PEXPIRE', KEYS[1], window + 1000)
redis.call('PEXPIRE', KEYS[2], window + 1000)
return 0
