"""Beginning a new generation in a workspace: scrub bytecode, take the tree identity, write
the stamp. What ``genstamp stamp`` and the post-checkout, post-merge and post-rewrite hooks do."""

from __future__ import annotations

from typing import NamedTuple

from genstamp import generation
from genstamp.identity import tree_identity
from genstamp.repo import Checkout, head_id, nested_index
from genstamp.scrub import ScrubResult, scrub


class Begun(NamedTuple):
    generation: generation.Generation
    scrub: ScrubResult | None  # None when not scrubbed


def begin(
    checkout: Checkout, *, trigger: str = "manual", do_scrub: bool = True, venvs: bool = False
) -> Begun:
    """Scrub (unless told not to), then write a new generation of the tree as it is then."""
    generation.check_trigger(trigger)  # before anything is deleted
    # Before the identity is computed: the index still holds only what git tracks.
    result = (
        scrub(checkout.workdir, venvs=venvs, tracked=checkout.repo.index, nested=nested_index)
        if do_scrub
        else None
    )
    gen = generation.new(
        checkout,
        tree=tree_identity(checkout),
        head=head_id(checkout.repo),
        trigger=trigger,
        scrub=result.summary() if result is not None else None,
    )
    generation.write(checkout, gen)
    return Begun(gen, result)
