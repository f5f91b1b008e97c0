"""Asking an LLM judge over HTTP (``_client``: httpx, retries, a pace the server allows) and the
journal that keeps its answers on disk until they are committed, so a killed rejudge loses only
its calls in flight (``_journal``). What a judge is and what its reply means are transforms
(``scorelake.transforms.judging``)."""

from scorelake.judge_client._client import JudgeRefused, RetryPolicy, Tally, ask_all
from scorelake.judge_client._journal import Journal, journal_folder, orphaned, read_journal

__all__ = ["Journal", "JudgeRefused", "RetryPolicy", "Tally", "ask_all", "journal_folder",
           "orphaned", "read_journal"]
