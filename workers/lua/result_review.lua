-- Replace a job's machine result with the result a person reviewed: the one path by
-- which a final result is ever overwritten (result_store.lua keeps every SUCCESS).
-- It replaces only the result it was made from, so a review is written once, and a
-- second review, or any other result, is never overwritten (workers/result_backend.py).
-- KEYS[1] the job's meta key (celery-task-meta-<id>).
-- ARGV[1] the encoded meta (JSON) holding the reviewed result, ARGV[2] its TTL in
-- seconds (0: none), ARGV[3] the machine result's status it replaces (needs_review, or
-- ok for a review's verdict), ARGV[4] the review's id (result.review.id).
-- Returns 1 when stored and published; 2 when this review is stored already; 0 when
-- another review is; -1 when the stored result is not the machine result (another
-- state or status), nothing written. A key gone with its TTL is written anew.
local current = redis.call('GET', KEYS[1])
if current then
  local ok, meta = pcall(cjson.decode, current)
  if not ok or type(meta) ~= 'table' or meta['status'] ~= 'SUCCESS' or type(meta['result']) ~= 'table' then
    return -1
  end
  local status = meta['result']['status']
  if status == 'reviewed' then
    local review = meta['result']['review']
    if type(review) == 'table' and review['id'] == ARGV[4] then
      return 2
    end
    return 0
  end
  if status ~= ARGV[3] then
    return -1
  end
end
-- include: meta_write
redis.call('PUBLISH', KEYS[1], ARGV[1])
return 1
