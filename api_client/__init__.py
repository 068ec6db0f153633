"""Everything that talks to vetq from outside: the Python client (a producer's
`Client`, an operator's `Admin`), the CLI and the MCP server. Producers send tasks
by name; importing this package pulls in no worker code and no provider SDK."""

from vetq.api_client.admin import Admin
from vetq.api_client.aio import AsyncBatch, AsyncClient, AsyncJob
from vetq.api_client.client import Batch, BatchStream, Client, Job, JobStatus, NoWorkerError

__all__ = [
    "Admin",
    "AsyncBatch",
    "AsyncClient",
    "AsyncJob",
    "Batch",
    "BatchStream",
    "Client",
    "Job",
    "JobStatus",
    "NoWorkerError",
]
