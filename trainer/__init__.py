"""What runs inside a training job: the trainer program, its data code and its metrics.

Never imports Prefect: the same code runs under local torchrun / accelerate and in Azure ML jobs.
"""
