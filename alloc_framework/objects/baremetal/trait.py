"""Node traits: validation and the SQL of the ``node_traits`` table.

A trait is a standard name from ``os_traits`` or a custom name
``CUSTOM_[A-Z0-9_]+``; a node has at most ``MAX_TRAITS_PER_NODE`` of them,
as upstream allows.
"""

import re

import os_traits
import sqlalchemy as sa

from alloc_framework.common import exception
from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models

MAX_TRAITS_PER_NODE = 50
MAX_TRAIT_LENGTH = 255
_CUSTOM_RE = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
_STANDARD = frozenset(os_traits.get_traits())


def validate_trait(trait):
    """Check one trait name.

    :raises: InvalidTrait naming the trait and the reason.
    """
    if not isinstance(trait, str) or not trait:
        raise exception.InvalidTrait(trait=repr(trait),
                                     reason='a trait must be a non-empty '
                                            'string')
    if len(trait) > MAX_TRAIT_LENGTH:
        raise exception.InvalidTrait(
            trait=trait, reason='longer than %d characters'
            % MAX_TRAIT_LENGTH)
    if _CUSTOM_RE.match(trait) or trait in _STANDARD:
        return
    raise exception.InvalidTrait(
        trait=trait, reason='it is neither a standard trait nor a custom '
                            'trait matching ^CUSTOM_[A-Z0-9_]+$')


def validate_traits(traits):
    """Check a list of trait names; returns them without duplicates.

    :raises: InvalidTrait
    """
    if not isinstance(traits, (list, tuple, set)):
        raise exception.InvalidTrait(trait=repr(traits),
                                     reason='traits must be a list')
    for trait in traits:
        validate_trait(trait)
    return sorted(set(traits))


def _check_limit(node_id, count):
    if count > MAX_TRAITS_PER_NODE:
        raise exception.TooManyTraits(node=node_id, count=count,
                                      limit=MAX_TRAITS_PER_NODE)


def _node_exists(context, node_id):
    found = context.session.execute(
        sa.select(models.Node.id).where(models.Node.id == node_id)).first()
    if found is None:
        raise exception.NodeNotFound(node=node_id)


@db_api.reader
def get_traits(context, node_id):
    """The sorted traits of a node.

    :raises: NodeNotFound
    """
    _node_exists(context, node_id)
    return [r[0] for r in context.session.execute(
        sa.select(models.NodeTrait.trait)
        .where(models.NodeTrait.node_id == node_id)
        .order_by(models.NodeTrait.trait))]


@db_api.writer
def set_traits(context, node_id, traits):
    """Replace all traits of a node atomically; returns the new list.

    :raises: NodeNotFound, InvalidTrait, TooManyTraits
    """
    traits = validate_traits(traits)
    _check_limit(node_id, len(traits))
    _node_exists(context, node_id)
    context.session.execute(sa.delete(models.NodeTrait)
                            .where(models.NodeTrait.node_id == node_id))
    if traits:
        context.session.execute(
            sa.insert(models.NodeTrait),
            [{'node_id': node_id, 'trait': t} for t in traits])
    return traits


@db_api.writer
def add_trait(context, node_id, trait):
    """Add one trait to a node (no-op when it has it already).

    :raises: NodeNotFound, InvalidTrait, TooManyTraits
    """
    validate_trait(trait)
    current = get_traits(context, node_id)
    if trait in current:
        return current
    _check_limit(node_id, len(current) + 1)
    context.session.execute(sa.insert(models.NodeTrait),
                            [{'node_id': node_id, 'trait': trait}])
    return sorted(current + [trait])


@db_api.writer
def add_traits(context, node_id, traits):
    """Add several traits to a node; returns the new list.

    :raises: NodeNotFound, InvalidTrait, TooManyTraits
    """
    traits = validate_traits(traits)
    current = get_traits(context, node_id)
    new = [t for t in traits if t not in current]
    _check_limit(node_id, len(current) + len(new))
    if new:
        context.session.execute(
            sa.insert(models.NodeTrait),
            [{'node_id': node_id, 'trait': t} for t in new])
    return sorted(current + new)


@db_api.writer
def remove_trait(context, node_id, trait):
    """Remove one trait from a node.

    :raises: NodeNotFound, NodeTraitNotFound
    """
    _node_exists(context, node_id)
    count = context.session.execute(
        sa.delete(models.NodeTrait)
        .where(models.NodeTrait.node_id == node_id,
               models.NodeTrait.trait == trait)).rowcount
    if not count:
        raise exception.NodeTraitNotFound(node_id=node_id, trait=trait)


@db_api.writer
def remove_all_traits(context, node_id):
    """Remove every trait of a node.

    :raises: NodeNotFound
    """
    _node_exists(context, node_id)
    context.session.execute(sa.delete(models.NodeTrait)
                            .where(models.NodeTrait.node_id == node_id))


@db_api.reader
def trait_exists(context, node_id, trait):
    """Whether a node has ``trait``.

    :raises: NodeNotFound
    """
    _node_exists(context, node_id)
    return context.session.execute(
        sa.select(models.NodeTrait.trait)
        .where(models.NodeTrait.node_id == node_id,
               models.NodeTrait.trait == trait)).first() is not None
