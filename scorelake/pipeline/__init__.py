"""The steps the flows orchestrate, free of Prefect: ingest's commit, re-scoring, re-judging, checks,
policies and judges, reviews, the gate and its alerts, the conversion of an older warehouse. They
read and write the warehouse (``scorelake.storage``) and ask the judge (``scorelake.judge_client``);
what they compute is ``scorelake.transforms``'s. An ingest's worker processes import none of this:
reading sessions is ``scorelake.transforms.sources``'s."""

from scorelake.pipeline._alerts import Delivery, deliver
from scorelake.pipeline._calibrations import active_draw, store_calibration
from scorelake.pipeline._check import verify
from scorelake.pipeline._gate import alert, comparison, gate, previous_runs
from scorelake.pipeline._ingest import IngestPlan, commit_ingested, group_runs, plan_ingest, record_refusals
from scorelake.pipeline._judgements import (
    COMMIT_LOCK_WAIT_S,
    commit_judgements,
    commit_majority,
    commit_orphaned_journals,
    judged_by,
    keep_majority_of_policies,
    recorded_judgements,
)
from scorelake.pipeline._judges import define_judge, find_judge, forget_judge, policies_using, save_judge, stored_judges
from scorelake.pipeline._migrate import migrate, prepare_for_writing
from scorelake.pipeline._otlp import ExportFailed, export_otlp
from scorelake.pipeline._policies import (
    check_policy,
    check_whitelisted_domains,
    find_policy,
    save_policy,
    stored_policies,
)
from scorelake.pipeline._rejudge import JUDGE_BATCH, BatchResult, JudgementCommitter, api_key_from, judge_batch
from scorelake.pipeline._rejudge_plan import RejudgePlan, plan_rejudge, twin_judgements
from scorelake.pipeline._rescore import require_judged, rescore, score_runs
from scorelake.pipeline._task_maps import declare_task_map, read_task_map
from scorelake.pipeline._reviews import (
    REVIEW_LOCK_WAIT_S,
    Review,
    check_reviews,
    read_review_file,
    ruled_reviews,
    store_reviews,
    undecided,
)
from scorelake.pipeline._reviews import describe as describe_reviews

__all__ = [
    "COMMIT_LOCK_WAIT_S", "JUDGE_BATCH", "REVIEW_LOCK_WAIT_S", "BatchResult", "Delivery", "ExportFailed", "IngestPlan",
    "JudgementCommitter", "RejudgePlan", "Review", "active_draw", "alert", "api_key_from", "check_policy", "check_reviews",
    "check_whitelisted_domains", "commit_ingested", "declare_task_map", "commit_judgements", "commit_majority",
    "commit_orphaned_journals", "comparison", "define_judge", "deliver", "describe_reviews", "export_otlp", "find_judge",
    "find_policy", "forget_judge", "gate", "group_runs", "judge_batch", "judged_by",
    "keep_majority_of_policies", "migrate", "plan_ingest", "plan_rejudge", "policies_using",
    "prepare_for_writing", "previous_runs", "read_review_file", "read_task_map", "record_refusals", "recorded_judgements",
    "require_judged", "rescore", "ruled_reviews", "save_judge", "save_policy", "score_runs",
    "stored_judges", "stored_policies", "store_calibration", "store_reviews", "twin_judgements", "undecided", "verify",
]
