-- The running sum of one provider:model window, so that no acquire reads the whole
-- window (included by rl_acquire and rl_settle; workers/rate_limiter.py).
-- Keys: w the window (sorted set: entry id, scored by ms), t the entries' tokens (hash:
-- entry id -> tokens), s the sum (hash: `tokens` = the tokens of w's entries as t holds
-- them, a missing or unreadable value counting 0, as a read of the whole window always
-- counted them; `entries` = how many entries that is; `recounts` = how often the sum was
-- counted again from the window; and the tenants' part of it, below). All three expire
-- together, at the same ms.
--
-- Why the sum cannot drift:
-- 1. These scripts change w and t only together with the sum, in the same atomic
--    script: an admitted entry adds its estimate (an id still in the window replaces
--    its tokens: + estimate - what it held); a settle replaces an entry's tokens (+ actual
--    - what it held) only while the entry is in the window, so a settle arriving after
--    its entry was trimmed, or after the keys expired, finds no entry and changes
--    nothing; a trim subtracts the tokens of exactly the entries it removes, read just
--    before removing them. A trimmed entry's later settle is therefore never counted,
--    and each entry is subtracted once, with the tokens it held then. By induction the
--    sum is right after every script, as long as nothing else writes these keys.
-- 2. Everything else that could change them is noticed at the start of every script
--    (rl_window, O(1)), before the sum is read or changed:
--    - a key evicted, deleted or expired on its own (each is its own key, whatever their
--      common expiry): `entries` differs from w's or t's size (a missing s holds 0);
--    - a writer that keeps w and t but not s (the previous release's scripts during a
--      rolling upgrade): an add or a trim changes the sizes; and every write of theirs
--      sets w's expiry to (their now + window + 1 s), while these scripts set all three
--      keys to expire at one ms, RL_TTL_MARGIN_MS sooner than that (so a write of theirs
--      even within the same ms as ours lands later), so w expiring later than s means
--      w was written since by someone else (in particular by a settle of theirs, which
--      changes no size);
--    - a sum left over an empty window, or a walk of the oldest entries that runs out
--      before it frees the tokens the sum says are there (rl_acquire).
--    Then the sum is counted again from the whole window (O(n), once) and t is made to
--    match w (tokens of ids no longer in the window dropped, a window entry without
--    tokens given 0, which is how it was counted).
local RL_TTL_MARGIN_MS = 10

-- Tenants. The entry of a tenant's call is `<tenant>:<id>`, a plain id is a call sent
-- without one (the tenant ``). Beside the sum, s holds per tenant `n:<tenant>` (its
-- entries in the window) and `k:<tenant>` (their tokens), and `tn`/`tk` for all the
-- tenants' entries together; the calls without a tenant are the rest (`entries` - tn,
-- `tokens` - tk), so a fleet without tenants keeps no field more. They change only with
-- the sum, in the same scripts, by the argument above (a trim subtracts exactly the
-- entries it removes from their tenants), and are counted again with it.
local function rl_tenant_of(id)
  return string.match(id, '^([a-z0-9_-]+):') or ''
end

-- A tenant's {n, k} in the window (read once per script; `` is derived, never stored).
local function rl_tenant(st, tenant)
  if tenant == '' then
    return {n = st.n - st.tn, k = st.sum - st.tk}
  end
  local use = st.ten[tenant]
  if use == nil then
    local saved = redis.call('HMGET', st.s, 'n:' .. tenant, 'k:' .. tenant)
    use = {n = tonumber(saved[1]) or 0, k = tonumber(saved[2]) or 0}
    st.ten[tenant] = use
  end
  return use
end

local function rl_tenant_add(st, tenant, n, k)
  if tenant == '' then
    return
  end
  local use = rl_tenant(st, tenant)
  use.n, use.k, use.dirty = use.n + n, use.k + k, true
  st.tn, st.tk = st.tn + n, st.tk + k
end

local function rl_recount(st)
  local members = redis.call('ZRANGE', st.w, 0, -1)
  local raw = redis.call('HGETALL', st.t)
  local held = {}
  for i = 1, #raw, 2 do
    held[raw[i]] = raw[i + 1]
  end
  local sum, missing = 0, {}
  local tenants, tn, tk = {}, 0, 0
  for i = 1, #members do
    local tokens = held[members[i]]
    local counted = 0
    if tokens then
      counted = tonumber(tokens) or 0
      sum = sum + counted
      held[members[i]] = nil
    else
      missing[#missing + 1] = members[i]
      missing[#missing + 1] = 0
    end
    local tenant = rl_tenant_of(members[i])
    if tenant ~= '' then
      local use = tenants[tenant] or {n = 0, k = 0, dirty = true}
      use.n, use.k = use.n + 1, use.k + counted
      tenants[tenant] = use
      tn, tk = tn + 1, tk + counted
    end
  end
  -- the tenants' fields are counted again too: the old ones go
  local fields = redis.call('HKEYS', st.s)
  local stale = {}
  for i = 1, #fields do
    if string.find(fields[i], '^[nk]:') or fields[i] == 'tn' or fields[i] == 'tk' then
      stale[#stale + 1] = fields[i]
    end
  end
  for i = 1, #stale, 1000 do
    redis.call('HDEL', st.s, unpack(stale, i, math.min(i + 999, #stale)))
  end
  st.ten, st.tn, st.tk = tenants, tn, tk
  local strays = {}
  for id in pairs(held) do
    strays[#strays + 1] = id
  end
  for i = 1, #strays, 1000 do
    redis.call('HDEL', st.t, unpack(strays, i, math.min(i + 999, #strays)))
  end
  for i = 1, #missing, 1000 do
    redis.call('HSET', st.t, unpack(missing, i, math.min(i + 999, #missing)))
  end
  st.sum, st.n = sum, #members
  st.changed, st.recounted = true, true
  if st.n > 0 then
    -- keep the window's own expiry, now shared by all three keys again
    local ttl = redis.call('PTTL', st.w)
    st.expire_at = math.floor(st.now) + (ttl > 0 and ttl or st.life - RL_TTL_MARGIN_MS)
  end
end

-- The window's state, its sum checked (and counted again if it cannot be trusted).
local function rl_window(w, t, s, now, life)
  local st = {w = w, t = t, s = s, now = now, life = life, changed = false, recounted = false, ten = {}}
  local saved = redis.call('HMGET', s, 'tokens', 'entries', 'tn', 'tk')
  st.sum, st.n = tonumber(saved[1]) or 0, tonumber(saved[2]) or 0
  st.tn, st.tk = tonumber(saved[3]) or 0, tonumber(saved[4]) or 0
  local count = redis.call('ZCARD', w)
  local suspect = st.n ~= count or redis.call('HLEN', t) ~= count or (count == 0 and st.sum ~= 0)
    or st.tn < 0 or st.tn > count
  if not suspect and count > 0 then
    -- s first: where the clock moves between the two calls (Redis before 7), w's
    -- expiry can then only read sooner than s's, never later
    local s_ttl = redis.call('PTTL', s)
    local w_ttl = redis.call('PTTL', w)
    suspect = s_ttl < 0 or w_ttl < 0 or w_ttl > s_ttl
  end
  if suspect then
    rl_recount(st)
  end
  return st
end

-- Remove the entries at or before `cutoff`, and their tokens from the sum.
local function rl_trim(st, cutoff)
  local expired = redis.call('ZRANGEBYSCORE', st.w, '-inf', cutoff)
  if #expired == 0 then
    return
  end
  for i = 1, #expired, 1000 do
    local last = math.min(i + 999, #expired)
    local held = redis.call('HMGET', st.t, unpack(expired, i, last))
    for k = 1, #held do
      local tokens = tonumber(held[k]) or 0
      st.sum = st.sum - tokens
      rl_tenant_add(st, rl_tenant_of(expired[i + k - 1]), -1, -tokens)
    end
    redis.call('HDEL', st.t, unpack(expired, i, last))
  end
  redis.call('ZREMRANGEBYSCORE', st.w, '-inf', cutoff)
  st.n = st.n - #expired
  st.changed = true
end

-- With `used` tokens in the window, the ms until `est` more fit within `tpm` (0: they
-- fit now): the time the oldest entries that must leave first take to leave, read
-- oldest first in growing pages, so only those entries are read. nil when the window
-- runs out first, which a right sum makes impossible.
local function rl_tokens_wait(st, used, est, tpm, window)
  if used + est <= tpm then
    return 0
  end
  local start, size = 0, 16
  while true do
    local page = redis.call('ZRANGE', st.w, start, start + size - 1, 'WITHSCORES')
    if #page == 0 then
      return nil
    end
    local ids = {}
    for i = 1, #page, 2 do
      ids[#ids + 1] = page[i]
    end
    local held = redis.call('HMGET', st.t, unpack(ids))
    for k = 1, #ids do
      used = used - (tonumber(held[k]) or 0)
      if used + est <= tpm then
        return tonumber(page[2 * k]) + window - st.now
      end
    end
    start = start + #ids
    size = math.min(size * 2, 1024)
  end
end

-- An entry was written: all three keys expire `life` (less the margin) from now.
local function rl_written(st)
  st.changed = true
  st.expire_at = math.floor(st.now) + st.life - RL_TTL_MARGIN_MS
end

-- Store the sum (s goes with the window's last entry) and the common expiry.
local function rl_save(st)
  if st.changed then
    if st.n <= 0 then
      redis.call('DEL', st.s)
      return
    end
    redis.call('HSET', st.s, 'tokens', st.sum, 'entries', st.n)
    if st.tn ~= 0 or st.tk ~= 0 or next(st.ten) ~= nil then
      redis.call('HSET', st.s, 'tn', st.tn, 'tk', st.tk)
    end
    for tenant, use in pairs(st.ten) do
      if use.dirty then
        if use.n <= 0 then
          redis.call('HDEL', st.s, 'n:' .. tenant, 'k:' .. tenant)
        else
          redis.call('HSET', st.s, 'n:' .. tenant, use.n, 'k:' .. tenant, use.k)
        end
      end
    end
    if st.recounted then
      redis.call('HINCRBY', st.s, 'recounts', 1)
    end
  end
  if st.expire_at and st.n > 0 then
    redis.call('PEXPIREAT', st.w, st.expire_at)
    redis.call('PEXPIREAT', st.t, st.expire_at)
    redis.call('PEXPIREAT', st.s, st.expire_at)
  end
end
