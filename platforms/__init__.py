"""Where things run and are kept: the store, Dask, training, the registry, the endpoint.

`backends.Backends` is the one place that builds these objects from settings; each protocol has a
local implementation here and an Azure ML one in `azureml/`. Nothing here imports `tasks/`,
`flows/` or `cli/`.
"""
