"""Provider pools with rotation and cooldowns, below the run loop.

A chain is a list of pools, in the order of the settings' entries; a pool is the candidates (keys)
for one (provider, model), tried least-recently-used first. The rotating provider tries candidates
only until the first streamed event: after that, a failure belongs to the run loop (retrying here
could repeat what the model already started).

- account failures (401/403, 402 or "insufficient balance", 429 for quota or spend limits): that
  credential cools down for 10 minutes (in this process only) and the next candidate is tried;
- a plain rate limit (429 without quota wording) is the key's too: it rests for the server's
  retry-after (else `RATE_LIMIT_REST`) and the next key of the same pool is tried at once; only when no
  other key of the pool is left does the error go to the run loop, which waits and retries that key
  (a rate limit never switches to another model);
- transient network failures and timeouts: the same candidate again, up to 3 times, then the next;
- a candidate silent for `first_event_timeout` seconds: the next one;
- everything else (400, content policy, 5xx, context overflow): passed through unchanged, for the
  run loop's own policy.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace

from orkas.core.errors import ProviderError
from orkas.engine.convert import to_llm_messages
from orkas.engine.providers.base import (
    Capabilities,
    FallbackChunk,
    Provider,
    ProviderRequest,
    StreamChunk,
    UsageChunk,
)

COOLDOWN = 600.0
FIRST_EVENT_TIMEOUT = 180.0
NETWORK_RETRIES = 3
RATE_LIMIT_REST = 30.0  # seconds a rate-limited key rests when the server does not say
_QUOTA = re.compile(r"quota|spend(ing)? limit|usage limit|insufficient|billing|credit", re.IGNORECASE)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Candidate:
    provider: Provider
    model: str
    credential: str  # a vault name, or "" for keyless servers

    @property
    def label(self) -> str:
        key = f" ({self.credential})" if self.credential else ""
        return f"{self.provider.name}/{self.model}{key}"


def account_failure(error: ProviderError) -> str | None:
    """The reason to cool a credential down, or None when the failure is not the account's."""
    if error.kind in ("auth", "billing"):
        return error.kind
    if error.kind == "rate_limit" and _QUOTA.search(error.message):
        return "quota"
    return None


class RotatingProvider:
    def __init__(
        self,
        chain: Sequence[Sequence[Candidate]],
        *,
        clock: Callable[[], float] = time.monotonic,
        cooldown: float = COOLDOWN,
        first_event_timeout: float = FIRST_EVENT_TIMEOUT,
        network_retries: int = NETWORK_RETRIES,
        cooldowns: dict[str, float] | None = None,
    ) -> None:
        if not chain or not chain[0]:
            raise ValueError("a rotating provider needs at least one candidate")
        self.chain = [list(pool) for pool in chain]
        self.clock = clock
        self.cooldown = cooldown
        self.first_event_timeout = first_event_timeout
        self.network_retries = network_retries
        self.cooldowns = cooldowns if cooldowns is not None else {}  # credential -> cooled until
        self._last_used: dict[str, float] = {}
        self._uses = 0

    @property
    def name(self) -> str:
        return self.chain[0][0].provider.name

    @property
    def capabilities(self) -> Capabilities:
        return self.chain[0][0].provider.capabilities

    def clear_cooldown(self, credential: str) -> None:
        """A new key or a successful test makes a credential usable again at once."""
        self.cooldowns.pop(credential, None)

    def _order(self, pool: list[Candidate]) -> list[Candidate]:
        now = self.clock()
        usable = [c for c in pool if self.cooldowns.get(c.credential, 0.0) <= now]
        return sorted(usable, key=lambda c: self._last_used.get(c.credential or c.label, -1.0))

    def _another(self, pool: list[Candidate], tried: set[str]) -> bool:
        """Is a key of this pool left to try now (not tried in this call, not resting)?"""
        return any(c.credential not in tried for c in self._order(pool))

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamChunk]:
        failures: list[str] = []
        tried: set[str] = set()
        previous: Candidate | None = None
        reason = ""
        for index, pool in enumerate(self.chain):
            for candidate in self._order(pool):
                if previous is not None:
                    yield FallbackChunk(
                        reason=reason,
                        failed=previous.label,
                        using=candidate.label,
                        message=f"{previous.label} failed ({failures[-1]}); trying {candidate.label}",
                    )
                attempt = 0
                while True:
                    # The first pool is the provider the run asked for: its keys serve the model asked for.
                    model = request.model if index == 0 else candidate.model
                    outcome = await self._first(candidate, request, model)
                    if isinstance(outcome, tuple):
                        first, rest = outcome
                        self._uses += 1
                        self._last_used[candidate.credential or candidate.label] = self._uses
                        for chunk in first:
                            yield chunk
                        async for chunk in rest:  # failures from here on are the run loop's
                            yield chunk
                        return
                    error = outcome
                    cooled = account_failure(error) if isinstance(error, ProviderError) else None
                    if cooled is not None:
                        self.cooldowns[candidate.credential] = self.clock() + self.cooldown
                        reason = cooled
                    elif isinstance(error, ProviderError) and error.kind == "rate_limit":
                        if not self._another(pool, tried | {candidate.credential}):
                            raise error  # the last key: the run loop waits (retry-after) and retries it
                        pause = error.retry_after if error.retry_after is not None else RATE_LIMIT_REST
                        self.cooldowns[candidate.credential] = self.clock() + pause
                        reason = "rate_limit"
                    elif isinstance(error, TimeoutError):
                        reason = "no_first_event"
                    elif error.kind in ("network", "timeout") and attempt < self.network_retries:
                        attempt += 1
                        await asyncio.sleep(min(0.5 * 2 ** (attempt - 1), 2.0))
                        continue
                    elif error.kind in ("network", "timeout"):
                        reason = "network"
                    else:
                        raise error
                    failures.append(_describe(candidate, error))
                    log.info("pool %s: %s failed (%s); rotating", self.name, candidate.label, reason)
                    tried.add(candidate.credential)
                    previous = candidate
                    break
        if not failures:
            failures.append("every key is cooling down after account errors; try again later or add a key")
        kinds = {f.split(": ", 2)[1] for f in failures if f.count(": ") >= 2}
        raise ProviderError(
            "no model could take the request: " + "; ".join(failures),
            kind="auth" if kinds == {"auth"} else "exhausted",
            provider=self.name,
        )

    async def _first(
        self, candidate: Candidate, request: ProviderRequest, model: str
    ) -> tuple[list[StreamChunk], AsyncIterator[StreamChunk]] | ProviderError | TimeoutError:
        """The candidate's first event, with the counts said before it (`UsageChunk`: not content, so a failure
        after them still rotates, as it did before the adapters said them), and the rest of its stream."""
        messages = to_llm_messages(
            request.messages, candidate.provider.capabilities, provider=candidate.provider.name, model=model
        )
        adapted = replace(request, model=model, messages=messages)
        stream = aiter(candidate.provider.stream(adapted))
        first: list[StreamChunk] = []
        try:
            while not first or isinstance(first[-1], UsageChunk):
                first.append(await asyncio.wait_for(anext(stream), timeout=self.first_event_timeout))
        except ProviderError as error:
            return error
        except TimeoutError as error:
            await _close(stream)
            return error
        except StopAsyncIteration:
            return ProviderError("the stream ended before anything arrived", kind="network", provider=candidate.label)
        return first, stream

    async def validate_auth(self) -> None:
        await self.chain[0][0].provider.validate_auth()

    async def aclose(self) -> None:
        for pool in self.chain:
            for candidate in pool:
                await candidate.provider.aclose()


def _describe(candidate: Candidate, error: Exception) -> str:
    if isinstance(error, ProviderError):
        status = f" (HTTP {error.status})" if error.status else ""
        return f"{candidate.label}: {error.kind}: {error.message}{status}"
    return f"{candidate.label}: timeout: no first event within the limit"


async def _close(stream: AsyncIterator[StreamChunk]) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception:  # closing a stalled stream must not mask the fallback
            pass
