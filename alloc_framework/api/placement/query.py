"""Query-string parameters of the Placement API: validation, parsing.

``validate_query_params`` checks ``req.GET`` against a schema; the
``normalize_*`` functions turn the reference's value syntaxes
(``VCPU:2,MEMORY_MB:1024``, ``in:``, ``!``) into Python values, with the
reference's 400 messages.
"""

import re

import jsonschema
from oslo_utils import uuidutils
import webob.exc

from alloc_framework.api import limits
from alloc_framework.api.placement import microversion
from alloc_framework.common import schema as schema_utils

# Prefix of a forbidden trait or aggregate in query parameters.
FORBIDDEN_PREFIX = '!'
# Value prefix of "any of" lists (member_of=in:..., required=in:...).
IN_PREFIX = 'in:'
_QS_REQUIRED = 'required'
_QS_MEMBER_OF = 'member_of'


def validate_query_params(req, schema):
    """Validate ``req.GET`` (as a dict of lists or values) against schema.

    Keys the schema declares as arrays get every value; other keys get the
    last one. 400 with the offending parameter in the message.
    """
    props = schema.get('properties', {})
    params = {}
    for key in req.GET.keys():
        values = req.GET.getall(key)
        if props.get(key, {}).get('type') == 'array':
            params[key] = values
        else:
            params[key] = values[-1]
    # Keys matching patternProperties of type array also get every value.
    for pattern, sub in schema.get('patternProperties', {}).items():
        if sub.get('type') == 'array':
            regex = re.compile(pattern)
            for key in req.GET.keys():
                if regex.match(key):
                    params[key] = req.GET.getall(key)
    try:
        schema_utils.validate(params, schema)
    except jsonschema.ValidationError as exc:
        # jsonschema's full text, as the reference gives it.
        raise webob.exc.HTTPBadRequest(
            'Invalid query string parameters: %(exc)s' % {'exc': exc})


def normalize_resources_qs_param(qs):
    """``"VCPU:2,MEMORY_MB:1024"`` -> ``{'VCPU': 2, 'MEMORY_MB': 1024}``.

    :raises webob.exc.HTTPBadRequest: malformed value or amount.
    """
    if qs.strip() == '':
        raise webob.exc.HTTPBadRequest(
            'Badly formed resources parameter. Expected resources query '
            'string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. '
            'Got: empty string.')
    result = {}
    for pair in qs.split(','):
        try:
            rc_name, amount = pair.split(':')
        except ValueError:
            # The bad part, as the reference reports it ('' for a
            # trailing comma).
            raise webob.exc.HTTPBadRequest(
                'Badly formed resources parameter. Expected resources query '
                'string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. '
                'Got: %s.' % pair)
        try:
            amount = int(amount)
        except ValueError:
            raise webob.exc.HTTPBadRequest(
                'Requested resource %(name)s expected positive integer '
                'amount. Got: %(amount)s.' % {'name': rc_name,
                                              'amount': amount})
        if amount < 1:
            raise webob.exc.HTTPBadRequest(
                'Requested resource %(name)s requires amount >= 1. '
                'Got: %(amount)d.' % {'name': rc_name, 'amount': amount})
        if amount > limits.MAX_INT:
            raise webob.exc.HTTPBadRequest(
                'Requested resource %(name)s requires amount <= %(max)d. '
                'Got: %(amount)d.' % {'name': rc_name, 'amount': amount,
                                      'max': limits.MAX_INT})
        result[rc_name] = amount
    return result


def _bad_required(val, allow_forbidden):
    form = ('HW_CPU_X86_VMX,!CUSTOM_MAGIC' if allow_forbidden
            else 'HW_CPU_X86_VMX,CUSTOM_MAGIC')
    return webob.exc.HTTPBadRequest(
        "Invalid query string parameters: Expected 'required' parameter "
        "value of the form: %(form)s. Got: %(val)s"
        % {'form': form, 'val': val})


def normalize_traits_qs_param_to_legacy_value(val, allow_forbidden=False):
    """One ``required`` value as (required set, forbidden set).

    Accepts ``T1,!T2``; forbidden traits only when ``allow_forbidden``
    (microversion 1.22), before that ``!T2`` is a malformed value.
    """
    required, forbidden = set(), set()
    for trait in (t.strip() for t in val.split(',')):
        if not trait or trait == FORBIDDEN_PREFIX:
            raise _bad_required(val, allow_forbidden)
        if trait.startswith(FORBIDDEN_PREFIX):
            if not allow_forbidden:
                raise _bad_required(val, allow_forbidden)
            forbidden.add(trait[1:])
        else:
            required.add(trait)
    return required, forbidden


def normalize_traits_qs_param(val, allow_forbidden=False,
                              allow_any_traits=False):
    """One ``required`` value as (list of any-of sets, forbidden set).

    Each entry of the list is a set of traits of which at least one is
    required; ``T1,T2`` is ``[{T1}, {T2}]`` and, from microversion 1.39
    (``allow_any_traits``), ``in:T1,T2`` is ``[{T1, T2}]``.

    :raises webob.exc.HTTPBadRequest: empty names, ``in:`` before 1.39,
        ``!`` before 1.22, or a forbidden trait inside ``in:``.
    """
    if val.startswith(IN_PREFIX):
        if not allow_any_traits:
            raise webob.exc.HTTPBadRequest(
                "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported "
                "since microversion 1.39. Got: %s" % val)
        names = [t.strip() for t in val[len(IN_PREFIX):].split(',')]
        if not all(names) or any(n.startswith(FORBIDDEN_PREFIX)
                                 for n in names):
            raise webob.exc.HTTPBadRequest(
                "Invalid query string parameters: Expected 'required' "
                "parameter value of the form: in:HW_CPU_X86_VMX,"
                "CUSTOM_MAGIC. Got: %s" % val)
        return [set(names)], set()
    required, forbidden = normalize_traits_qs_param_to_legacy_value(
        val, allow_forbidden)
    return [{t} for t in sorted(required)], forbidden


def normalize_traits_qs_params(req, suffix='', allow_forbidden=False,
                               allow_any_traits=False):
    """Every ``required<suffix>`` value merged (repeatable from 1.39)."""
    any_traits = []
    forbidden = set()
    values = req.GET.getall(_QS_REQUIRED + suffix)
    if len(values) > 1 and not allow_any_traits:
        values = values[-1:]
    for value in values:
        a, f = normalize_traits_qs_param(value, allow_forbidden,
                                         allow_any_traits)
        any_traits.extend(a)
        forbidden |= f
    return any_traits, forbidden


def _member_of_value(value, allow_forbidden):
    """One ``member_of`` value as (uuid set, is_forbidden)."""
    original = value
    forbidden = value.startswith(FORBIDDEN_PREFIX)
    if forbidden and not allow_forbidden:
        raise webob.exc.HTTPBadRequest(
            'Forbidden member_of parameters are not supported in the '
            'specified microversion')
    if forbidden:
        value = value[1:]
    if value.startswith(IN_PREFIX):
        value = value[len(IN_PREFIX):]
    elif ',' in value:
        raise webob.exc.HTTPBadRequest(
            "Multiple values for 'member_of' must be prefixed with the "
            "'in:' or '!in:' keyword using the valid microversion. "
            "Got: %s" % original)
    uuids = [v.strip() for v in value.split(',')]
    for uuid in uuids:
        if not uuidutils.is_uuid_like(uuid):
            raise webob.exc.HTTPBadRequest(
                "Invalid query string parameters: Expected 'member_of' "
                "parameter to contain valid UUID(s). Got: %s" % original)
    return set(uuids), forbidden


def normalize_member_of_qs_params(req, suffix=''):
    """The ``member_of<suffix>`` parameters as (list of sets, forbidden).

    Each set of the list is an any-of group (``in:a,b``) that must all be
    satisfied. Before 1.24 only one parameter is allowed; from 1.32
    ``!uuid`` and ``!in:...`` name forbidden aggregates.
    """
    want = microversion.request_version(req)
    allow_multi = want.matches(microversion.MULTIPLE_MEMBER_OF)
    allow_forbidden = want.matches(microversion.FORBIDDEN_AGGREGATES)
    values = req.GET.getall(_QS_MEMBER_OF + suffix)
    if len(values) > 1 and not allow_multi:
        raise webob.exc.HTTPBadRequest(
            'Multiple member_of parameters are not supported until '
            'microversion 1.24.')
    required = []
    forbidden = set()
    for value in values:
        uuids, is_forbidden = _member_of_value(value, allow_forbidden)
        if is_forbidden:
            forbidden |= uuids
        else:
            required.append(uuids)
    return required, forbidden


def normalize_in_tree_qs_params(value):
    """The ``in_tree`` value: a provider uuid (400 if not a uuid)."""
    if not uuidutils.is_uuid_like(value):
        raise webob.exc.HTTPBadRequest(
            'Invalid query string parameters: Expected \'in_tree\' '
            'parameter to be a format of uuid. Got: %s' % value)
    return value
