-- wrk script: POSTs one KServe v2 binary-tensor inference request over keep-alive, again and again.
-- The body file and its JSON header length come from the environment (tools/peers/serve_overhead.py).
local file = assert(io.open(os.getenv("INFER_BODY"), "rb"))
wrk.method = "POST"
wrk.path = os.getenv("INFER_PATH")
wrk.body = file:read("*all")
wrk.headers["Inference-Header-Content-Length"] = os.getenv("INFER_HEADER_LENGTH")
wrk.headers["Content-Type"] = "application/octet-stream"
file:close()
