-- Store a job's state and result (Celery's task meta), unless the job already has a
-- SUCCESS stored: a redelivered or late run must never hide a result. Celery's
-- key-value backend reads the key from the client and writes in a second round
-- trip; here the read, the check and the write are one step (workers/result_backend.py).
-- KEYS[1] the job's meta key (celery-task-meta-<id>); KEYS[2], with a STARTED state
-- only, the job's cancel mark (core.redis_keys.cancel_key, in the same slot): the
-- task start reads it here, in the round trip it makes anyway.
-- ARGV[1] the encoded meta (JSON), ARGV[2] its TTL in seconds (0: none),
-- ARGV[3] '1' to PUBLISH it on the key's channel (what a waiting client listens to).
-- Returns 1 when stored, 0 when a SUCCESS was kept, 2 (nothing stored) when the job
-- was canceled: the run ends CANCELED without starting.
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then
  return 2
end
local current = redis.call('GET', KEYS[1])
if current then
  -- Celery writes the status first ({"status": "...", "result": ...}): read it without
  -- decoding a large result; any other layout is decoded whole.
  local status = string.match(current, '^%s*{%s*"status"%s*:%s*"([^"\\]*)"')
  if not status then
    local ok, meta = pcall(cjson.decode, current)
    status = ok and type(meta) == 'table' and meta['status'] or nil
  end
  if status == 'SUCCESS' then
    return 0
  end
end
-- include: meta_write
if ARGV[3] == '1' then
  redis.call('PUBLISH', KEYS[1], ARGV[1])
end
return 1
