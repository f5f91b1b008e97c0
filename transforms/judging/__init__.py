"""Asking an LLM judge again from the stored judge inputs, as transforms: upstream's judgement made
from a reply (``_upstream``), judges and their requests (``_spec``) and judgements as rows
(``_rows``), an exchange with a judge as data (``_exchange``), a judge asked K times and the
majority of its asks (``_majority``). The HTTP client and its journal are ``scorelake.judge_client``."""

from scorelake.transforms.judging._exchange import Answer, Call
from scorelake.transforms.judging._majority import (
    ASK,
    MAJORITY,
    ask_name,
    check_judge_name,
    majority_judgements,
    majority_name,
)
from scorelake.transforms.judging._rows import answer_row, with_judgements, without_escalated
from scorelake.transforms.judging._spec import BUILTIN, JudgeSpec, Request, RunJudge, request, run_judge, text_hash
from scorelake.transforms.judging._upstream import MISSING_VERDICT, error_judgement, http_error, judgement

__all__ = ["ASK", "BUILTIN", "MAJORITY", "MISSING_VERDICT", "Answer", "Call", "JudgeSpec", "ask_name", "check_judge_name",
           "majority_judgements", "majority_name", "Request", "RunJudge", "answer_row", "error_judgement",
           "http_error", "judgement", "request", "run_judge", "text_hash", "with_judgements", "without_escalated"]
