"""Scoring policies as stored in the warehouse: a name bound to one content, and back."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from scorelake.storage import Store
from scorelake.transforms.columns import frame
from scorelake.transforms.errors import InvalidArgument, NotFound
from scorelake.transforms.scoring import Policy


def stored_policies(store: Store) -> list[Policy]:
    """Every stored policy, ``recorded`` first; the recorded policy always exists."""
    specs = store.tables.read("policies").sort("created_at").unique("policy_id", keep="first", maintain_order=True).collect()
    policies = [Policy.from_spec_json(s) for s in specs["spec_json"]]
    recorded = Policy()
    return [recorded] + [p for p in policies if p.id != recorded.id]


def check_policy(store: Store, policy: Policy) -> None:
    """A name is bound to one content, and one content to one name."""
    for existing in stored_policies(store):
        if existing.name == policy.name and existing.id != policy.id:
            raise InvalidArgument(f"policy '{policy.name}' already exists with other settings; choose another name")
        if existing.id == policy.id and existing.name != policy.name:
            raise InvalidArgument(f"policy '{policy.name}' has the same settings as stored policy '{existing.name}'")


def check_whitelisted_domains(store: Store, policy: Policy) -> None:
    """A policy's whitelists name domains some stored run has (a typo would silently change nothing)."""
    if not policy.whitelists:
        return
    known = set(store.tables.scan("scenarios", store.tables.committed_runs()).select("domain").unique().collect()["domain"])
    unknown = sorted(set(policy.whitelists) - known)
    if unknown:
        raise InvalidArgument(f"--whitelist names domains no stored run has: {', '.join(unknown)} "
                              f"(domains: {', '.join(sorted(known)) or 'none'})")


def save_policy(store: Store, policy: Policy) -> bool:
    """Store a policy; False if it was stored already. Scores are visible only for stored policies,
    so storing one after its scores are written makes a new policy appear whole or not at all."""
    check_policy(store, policy)
    if store.tables.read("policies").filter(pl.col("policy_id") == policy.id).select(pl.len()).collect().item():
        return False
    row = {"policy_id": policy.id, "name": policy.name, "spec_json": policy.spec_json(),
           "created_at": datetime.now(UTC)}
    store.tables.append("policies", frame("policies", [row]))
    return True


def find_policy(store: Store, name: str) -> Policy:
    for policy in stored_policies(store):
        if name in (policy.name, policy.id):
            return policy
    raise NotFound(f"no stored policy named '{name}'")

