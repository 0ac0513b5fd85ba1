"""``multi_session_development``: three sessions, each building on the one before.

Planted: ``policies/lifecycle.py`` (the needle) names the status a closed record takes and
says a closed record cannot be quoted; ``legacy/lifecycle_v1.py`` (the decoy) names another
status. Session 1 adds ``<E>Service.close``; session 2 adds the API handler
``handle_close``, calling what session 1 added; session 3 refuses quotes of closed records.
Between sessions only the repository carries over (the prompt of each session shows the
files as the model's earlier answers left them, never the earlier chat). The hidden tests of
every session run together on the final repository (``test_s<k>_...``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from suites.locobench.generator.project import Plan, price
from suites.locobench.tasks.common import (
    Planted,
    add_import,
    dedent,
    find_constant,
    hidden_header,
    module_name,
    replace_once,
)

__all__ = ["plant", "reference"]

STATUS = "CLOSED_STATUS"
WORDS = ("archived", "settled", "retired", "sealed", "finalized")


def _policy(head: str, word: str, e: str) -> str:
    return dedent(f'''
        """{head}

        A {e} record is closed by setting its status to ``{STATUS}``. A closed record can no
        longer be quoted: quoting it is refused with the package's ``ValidationError``.
        """

        {STATUS} = "{word}"
        ''')


def plant(plan: Plan, rng: random.Random, files: dict[str, str]) -> Planted:
    """Add the lifecycle policy (needle) and its legacy copy (decoy); three sessions."""
    p, e, E = plan.pkg, plan.e, plan.E
    word = rng.choice(WORDS)
    needle, decoy = f"{p}/policies/lifecycle.py", f"{p}/legacy/lifecycle_v1.py"
    files[needle] = _policy(f"Lifecycle policy of {e} records.", word, e)
    files[decoy] = _policy(f"Lifecycle rules of the first release of {e} records.", "closed", e)
    q, u = rng.randrange(2, 7), rng.randrange(300, 1200)
    tests = hidden_header(f"""
        from {p}.api import {e}_api
        from {p}.errors import NotFoundError, ValidationError
        from {p}.repositories.{e}_repository import {E}Repository
        from {p}.services.{e}_service import {E}Service
        """) + dedent(f'''
        def _service():
            service = {E}Service({E}Repository())
            {e}_api.handle_create(service, {{"id": 1, "name": "c", "quantity": {q}, "unit_price_cents": {u}}})
            return service


        def test_s1_close_returns_the_record():
            assert _service().close(1).id == 1


        def test_s1_close_of_an_unknown_record_is_not_found():
            with pytest.raises(NotFoundError):
                _service().close(99)


        def test_s1_needle_close_sets_the_policy_status():
            assert _service().close(1).status == "{word}"


        def test_s2_handle_close_exists():
            assert callable(getattr({e}_api, "handle_close", None))


        def test_s2_needle_handle_close_reply():
            assert {e}_api.handle_close(_service(), {{"id": 1}}) == {{"id": 1, "status": "{word}"}}


        def test_s2_needle_closed_status_shows_in_get():
            service = _service()
            {e}_api.handle_close(service, {{"id": 1}})
            assert {e}_api.handle_get(service, {{"id": 1}})["status"] == "{word}"


        def test_s3_open_quote_unchanged():
            assert {e}_api.handle_quote(_service(), {{"id": 1}})["total_cents"] == {price(plan, q, u)}


        def test_s3_needle_quote_of_a_closed_record_is_refused():
            service = _service()
            {e}_api.handle_close(service, {{"id": 1}})
            with pytest.raises(ValidationError):
                {e}_api.handle_quote(service, {{"id": 1}})


        def test_s3_needle_status_alone_decides():
            service = _service()
            service.get(1).status = "{word}"
            with pytest.raises(ValidationError):
                service.quote_total(1)


        def test_decoy_legacy_status_refuses_quotes():
            service = _service()
            service.get(1).status = "closed"
            with pytest.raises(ValidationError):
                service.quote_total(1)
        ''')
    sessions = [
        dedent(f"""
            Session 1 of 3. Add a method `close(self, item_id: int) -> {E}` to `{E}Service`
            (`{p}/services/{e}_service.py`) that closes the {e} with `item_id` as the package's
            lifecycle policy says and returns it. An unknown id raises the package's NotFoundError,
            as the other look-ups do. No public signature changes.
            """),
        dedent(f"""
            Session 2 of 3. Add a request handler `handle_close(service, payload)` to
            `{p}/api/{e}_api.py`: it closes the {e} named by `payload["id"]` with the service method
            added in the previous session and returns `{{"id": <id>, "status": <its new status>}}`.
            """),
        dedent(f"""
            Session 3 of 3. Quoting a closed {e} must be refused as the lifecycle policy says (in
            `{E}Service.quote_total`); open {e} records are quoted exactly as before. No public
            signature changes.
            """),
    ]
    return Planted(
        title="Closing records, over three sessions",
        description=f"The {plan.domain} service needs a way to close {e} records, built in three steps.",
        sessions=sessions,
        hidden_tests=tests,
        needle_files=[needle],
        decoy_files=[decoy],
        info={"word": word},
    )


def reference(plan: Plan, planted: Planted, context: Mapping[str, str], session: int) -> dict[str, str]:
    """Session ``session`` (1-3) of the work, on the files as the prompt showed them, with
    the closed status read from the shown files (the decoy's when the policy is not shown)."""
    p, e, E = plan.pkg, plan.e, plan.E
    service_path, api_path = f"{p}/services/{e}_service.py", f"{p}/api/{e}_api.py"
    found = find_constant(context, STATUS)
    if found is None or service_path not in context or api_path not in context:
        return {}
    source = module_name(found[0])
    if session == 1:
        text = add_import(context[service_path], f"from {source} import {STATUS}")
        method = (
            f"\n    def close(self, item_id: int) -> {E}:\n"
            f'        """Close the {e} with ``item_id`` (the lifecycle policy\'s status) and return it."""\n'
            "        item = self._repository.fetch(item_id)\n"
            f"        item.status = {STATUS}\n"
            "        return item\n"
        )
        return {service_path: text.rstrip("\n") + "\n" + method}
    if session == 2:
        text = (
            context[api_path].rstrip("\n")
            + "\n"
            + dedent(f'''


            def handle_close(service: {E}Service, payload: dict) -> dict:
                """Close the {e} named by ``id``; its id and new status."""
                item = service.close(int(payload["id"]))
                return {{"id": item.id, "status": item.status}}
            ''')
        )
        return {api_path: text}
    text = add_import(context[service_path], f"from {source} import {STATUS}")
    text = replace_once(
        text,
        "        item = self._repository.fetch(item_id)\n        total = pricing.price(",
        "        item = self._repository.fetch(item_id)\n"
        f"        if item.status == {STATUS}:\n"
        f'            raise ValidationError(f"{e} {{item_id}} is closed and cannot be quoted")\n'
        "        total = pricing.price(",
    )
    return {service_path: text}
