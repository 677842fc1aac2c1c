"""What runs inside an endpoint: scoring shared by the local server and Azure ML, and the server.

`scoring` answers one request or a batch with a trained model directory (Azure ML's `init()` /
`run()` contract); `server` is the local online endpoint (named deployments, traffic, mirror,
key auth, probes, metrics); `client` talks to it.
"""
