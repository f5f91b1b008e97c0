"""The steps the flows orchestrate (ingest, re-score, check, conversion), free of Prefect."""

from scorelake.transforms.pipeline._check import task_id_warnings, verify
from scorelake.transforms.pipeline._gate import comparison, gate, notify, previous_runs, regression_text
from scorelake.transforms.pipeline._gate import summary as gate_summary
from scorelake.transforms.pipeline._ingest import (
    IngestedRun,
    IngestPlan,
    commit_ingested,
    group_runs,
    ingest_session,
    plan_ingest,
    record_refusals,
)
from scorelake.transforms.pipeline._judgements import (
    COMMIT_LOCK_WAIT_S,
    commit_judgements,
    commit_orphaned_journals,
    judged_by,
    recorded_judgements,
)
from scorelake.transforms.pipeline._judges import (
    define_judge,
    find_judge,
    forget_judge,
    policies_using,
    save_judge,
    stored_judges,
)
from scorelake.transforms.pipeline._migrate import migrate, prepare_for_writing
from scorelake.transforms.pipeline._policies import (
    check_policy,
    check_whitelisted_domains,
    find_policy,
    save_policy,
    stored_policies,
)
from scorelake.transforms.pipeline._rejudge import JUDGE_BATCH, BatchResult, api_key_from, judge_batch
from scorelake.transforms.pipeline._rejudge_plan import RejudgePlan, plan_rejudge
from scorelake.transforms.pipeline._rescore import require_judged, rescore, score_and_count
from scorelake.transforms.pipeline._reviews import (
    Review,
    check_reviews,
    read_review_file,
    store_reviews,
)
from scorelake.transforms.pipeline._reviews import describe as describe_reviews

__all__ = ["regression_text", "comparison", "gate", "gate_summary", "notify", "previous_runs", "Review", "check_reviews", "describe_reviews", "read_review_file", "store_reviews", "COMMIT_LOCK_WAIT_S", "JUDGE_BATCH", "BatchResult", "RejudgePlan", "api_key_from", "commit_judgements",
           "commit_orphaned_journals", "define_judge", "forget_judge", "find_judge", "judge_batch", "judged_by",
           "plan_rejudge", "policies_using", "recorded_judgements", "save_judge", "stored_judges",
           "IngestPlan", "IngestedRun", "check_policy", "check_whitelisted_domains", "commit_ingested", "group_runs", "find_policy",
           "ingest_session", "migrate", "plan_ingest", "prepare_for_writing", "record_refusals", "require_judged", "rescore",
           "save_policy", "score_and_count", "stored_policies", "task_id_warnings", "verify"]
