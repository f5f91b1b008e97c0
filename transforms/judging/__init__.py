"""Asking an LLM judge again from the stored judge inputs: upstream's judgement made from a reply
(``_upstream``), judges and their requests (``_spec``), the HTTP client (``_client``), the journal
that makes a killed rejudge lose only its calls in flight (``_journal``) and judgements as rows
(``_rows``)."""

from scorelake.transforms.judging._client import Answer, Call, JudgeRefused, RetryPolicy, Tally, ask_all
from scorelake.transforms.judging._journal import Journal, journal_folder, orphaned, read_journal
from scorelake.transforms.judging._rows import answer_row, with_judgements
from scorelake.transforms.judging._spec import BUILTIN, JudgeSpec, Request, RunJudge, request, run_judge, text_hash
from scorelake.transforms.judging._upstream import MISSING_VERDICT, error_judgement, http_error, judgement

__all__ = ["BUILTIN", "MISSING_VERDICT", "Answer", "Call", "Journal", "JudgeRefused", "JudgeSpec", "Request",
           "RetryPolicy", "RunJudge", "Tally", "answer_row", "ask_all", "error_judgement", "http_error", "journal_folder",
           "judgement", "orphaned", "read_journal", "request", "run_judge", "text_hash", "with_judgements"]
