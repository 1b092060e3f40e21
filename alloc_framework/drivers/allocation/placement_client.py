"""How the ``placement`` allocation backend talks to a Placement service.

:func:`get_adapter` builds a keystoneauth1 ``Adapter`` from the
``[placement]`` group:

* with ``auth_type`` or ``endpoint_override`` set, over HTTP, as any
  OpenStack service reaches Placement (``auth_type = password`` with
  keystone, ``admin_token`` with ``token = admin`` for a Placement using
  ``noauth2``, ``none`` or ``http_basic`` for our own);
* otherwise our own Placement application, called in this process on the
  same database with the admin identity of noauth (no port, no server):
  the in-process client of ``api/placement/direct.py``, which the command
  that starts the service hands to the backend, since ``drivers/`` never
  imports the API.

:class:`PlacementClient` holds the few calls the backend makes, all at
one fixed microversion that our Placement and upstream's both serve. It
is stateless: every answer comes from the service.
"""

from keystoneauth1 import loading as ks_loading

from alloc_framework.common import exception
from alloc_framework.conf import placement as placement_conf
from alloc_framework.placement_client import report

# 1.28: consumer generations; 1.31: in_tree in candidates; 1.34:
# mappings; 1.36 is served by every Placement since Train.
MICROVERSION = 'placement 1.36'

# Placement's stable error code of a 409 to a write that a consumer's or
# provider's generation refused: a claim of a consumer that exists.
CONCURRENT_UPDATE = 'placement.concurrent_update'


class PlacementError(Exception):
    """Placement answered with an unexpected status.

    ``status`` and ``code`` (Placement's stable error code, when it sent
    one) let callers branch without parsing the message.
    """

    def __init__(self, method, url, status, detail='', code=None):
        self.status = status
        self.code = code
        self.detail = detail
        super().__init__('Placement answered %s %s with %s%s: %s' % (
            method, url, status, ' (%s)' % code if code else '', detail))


def in_process_configured(conf):
    """Whether ``[placement]`` names no remote Placement."""
    group = conf[placement_conf.GROUP]
    return not group.auth_type and not group.endpoint_override


def get_adapter(conf, in_process=None):
    """A keystoneauth1 ``Adapter`` to the configured Placement.

    :param in_process: the in-process Placement the service offers, used
        when ``[placement]`` names no remote one: a callable taking the
        headers to send with every request and returning an ``Adapter``
        that does not raise on HTTP errors (the command that starts the
        service passes ``direct.InProcessPlacement(conf)`` of
        ``alloc_framework.api.placement.direct``).
    :raises: PlacementUnavailable when ``[placement]`` names no remote
        Placement and ``in_process`` is None.
    :raises: keystoneauth1's loading errors when ``[placement]`` names an
        unknown auth plugin or misses one of its options.
    """
    headers = {'OpenStack-API-Version': MICROVERSION}
    if in_process_configured(conf):
        if in_process is None:
            raise exception.PlacementUnavailable(
                reason='[placement] names no remote Placement (neither '
                       'auth_type nor endpoint_override) and this process '
                       'serves none in process')
        return in_process(headers)
    group = placement_conf.GROUP
    auth = ks_loading.load_auth_from_conf_options(conf, group)
    sess = ks_loading.load_session_from_conf_options(
        conf, group, auth=auth, additional_headers=headers)
    return ks_loading.load_adapter_from_conf_options(
        conf, group, session=sess, auth=auth, raise_exc=False,
        service_type=conf[group].service_type or 'placement',
        interface=conf[group].valid_interfaces or ['internal', 'public'])


def get_report_client(conf, in_process=None):
    """A ``ReportClient`` syncing provider trees with the configured Placement.

    Over the adapter of :func:`get_adapter`; in process, with the
    in-process Placement's ``tree_allocations`` (allocations of a tree in
    a constant number of queries) when it offers one.
    """
    tree_allocations = None
    if in_process_configured(conf):
        tree_allocations = getattr(in_process, 'tree_allocations', None)
    return report.ReportClient(get_adapter(conf, in_process),
                               tree_allocations=tree_allocations)


def _tree_claim(rp_uuid, summaries, requested):
    """``{provider: {class: free amount}}`` over the tree of ``rp_uuid``.

    Without summaries of the tree, what the request asked of the provider.
    """
    root = (summaries.get(rp_uuid) or {}).get('root_provider_uuid')
    claim = {}
    for uuid, summary in summaries.items():
        if uuid != rp_uuid and (
                root is None or summary.get('root_provider_uuid') != root):
            continue
        amounts = {}
        for rc, res in summary.get('resources', {}).items():
            free = res.get('capacity', 0) - res.get('used', 0)
            if free > 0:
                amounts[rc] = free
        if amounts:
            claim[uuid] = amounts
    return claim or {rp_uuid: dict(requested)}


def _error(resp):
    try:
        errors = resp.json().get('errors') or [{}]
    except ValueError:
        return resp.text[:200], None
    first = errors[0]
    return first.get('detail') or first.get('title', ''), first.get('code')


class PlacementClient:
    """The Placement calls of the ``placement`` backend.

    :param adapter: a keystoneauth1 ``Adapter`` (see :func:`get_adapter`)
        that does not raise on HTTP errors.
    """

    def __init__(self, adapter):
        self.adapter = adapter

    def _call(self, method, url, expected, body=None, params=None):
        kwargs = {}
        if body is not None:
            kwargs['json'] = body
        if params:
            kwargs['params'] = params
        resp = self.adapter.request(url, method, **kwargs)
        if resp.status_code not in expected:
            detail, code = _error(resp)
            raise PlacementError(method, url, resp.status_code, detail,
                                 code)
        return resp

    @staticmethod
    def _json(resp):
        return resp.json() if resp.content else None

    # --- providers ---

    def get_provider(self, uuid):
        """The provider, or None when Placement has none with that UUID."""
        resp = self._call('GET', '/resource_providers/%s' % uuid,
                          (200, 404))
        return self._json(resp) if resp.status_code == 200 else None

    def list_providers(self, required=None):
        """Every provider, or those with all the ``required`` traits.

        A trait Placement does not know (400) means no provider has it.
        """
        params = {'required': required} if required else None
        resp = self._call('GET', '/resource_providers', (200, 400),
                          params=params)
        if resp.status_code == 400:
            return []
        return resp.json()['resource_providers']

    def create_provider(self, uuid, name):
        """Create a root provider; its generation (0) is returned."""
        resp = self._call('POST', '/resource_providers', (200, 201),
                          body={'uuid': uuid, 'name': name})
        return self._json(resp)

    def rename_provider(self, uuid, name):
        self._call('PUT', '/resource_providers/%s' % uuid, (200,),
                   body={'name': name})

    def delete_provider(self, uuid):
        """Delete a provider; True when it existed.

        :raises: PlacementError 409 while it has allocations.
        """
        resp = self._call('DELETE', '/resource_providers/%s' % uuid,
                          (204, 404))
        return resp.status_code == 204

    def get_inventories(self, uuid):
        """(inventories by resource class, provider generation)."""
        body = self._call('GET', '/resource_providers/%s/inventories' % uuid,
                          (200,)).json()
        return (body['inventories'],
                body['resource_provider_generation'])

    def set_inventories(self, uuid, generation, inventories):
        """Replace the inventories; the new generation.

        :raises: PlacementError 409 on a generation conflict or when
            allocations use a class being removed.
        """
        body = self._call(
            'PUT', '/resource_providers/%s/inventories' % uuid, (200,),
            body={'resource_provider_generation': generation,
                  'inventories': inventories}).json()
        return body['resource_provider_generation']

    def get_traits(self, uuid):
        """(traits, provider generation)."""
        body = self._call('GET', '/resource_providers/%s/traits' % uuid,
                          (200,)).json()
        return body['traits'], body['resource_provider_generation']

    def set_traits(self, uuid, generation, traits):
        body = self._call(
            'PUT', '/resource_providers/%s/traits' % uuid, (200,),
            body={'resource_provider_generation': generation,
                  'traits': sorted(traits)}).json()
        return body['resource_provider_generation']

    def get_aggregates(self, uuid):
        """(aggregate UUIDs, provider generation)."""
        body = self._call('GET', '/resource_providers/%s/aggregates' % uuid,
                          (200,)).json()
        return body['aggregates'], body['resource_provider_generation']

    def set_aggregates(self, uuid, generation, aggregates):
        body = self._call(
            'PUT', '/resource_providers/%s/aggregates' % uuid, (200,),
            body={'resource_provider_generation': generation,
                  'aggregates': sorted(aggregates)}).json()
        return body['resource_provider_generation']

    def ensure_resource_class(self, name):
        """Create the custom resource class ``name`` if it is missing."""
        self._call('PUT', '/resource_classes/%s' % name, (201, 204))

    def ensure_trait(self, name):
        """Create the custom trait ``name`` if it is missing."""
        self._call('PUT', '/traits/%s' % name, (201, 204))

    def provider_allocations(self, uuid):
        """{consumer UUID: {resource class: amount}} on the provider."""
        resp = self._call(
            'GET', '/resource_providers/%s/allocations' % uuid, (200, 404))
        if resp.status_code == 404:
            return {}
        return {consumer: value['resources'] for consumer, value
                in resp.json()['allocations'].items()}

    # --- candidates and claims ---

    def candidates(self, resource_class, traits=(), member_of=None,
                   in_tree=None, limit=None):
        """UUIDs of the providers that can serve one unit of the class.

        A resource class or trait that Placement does not know (a 400 to
        a query built here) means that no provider has it: no candidate.
        """
        return list(self.candidate_claims(resource_class, traits,
                                          member_of, in_tree, limit))

    def candidate_claims(self, resource_class, traits=(), member_of=None,
                         in_tree=None, limit=None):
        """What claiming each candidate's whole tree takes.

        :returns: ``{candidate UUID: {provider UUID: {class: amount}}}``
            in Placement's order: for each provider that serves the unit,
            everything its tree has free (the providers of the tree, from
            ``provider_summaries``), so that a claim takes the whole node.
        """
        params = {'resources': '%s:1' % resource_class}
        if traits:
            params['required'] = ','.join(sorted(traits))
        if member_of:
            params['member_of'] = 'in:' + ','.join(member_of)
        if in_tree:
            params['in_tree'] = in_tree
        if limit:
            params['limit'] = str(limit)
        resp = self._call('GET', '/allocation_candidates', (200, 400),
                          params=params)
        if resp.status_code == 400:
            return {}
        body = resp.json()
        summaries = body.get('provider_summaries', {})
        found = {}
        for request in body['allocation_requests']:
            for rp_uuid, value in request['allocations'].items():
                if rp_uuid in found:
                    continue
                found[rp_uuid] = _tree_claim(rp_uuid, summaries,
                                             value.get('resources', {}))
        return found

    def claim(self, consumer, provider, resource_class, project_id,
              user_id, resources=None):
        """Allocate one unit of ``provider`` to a new ``consumer``.

        :param resources: ``{provider UUID: {class: amount}}`` to allocate
            instead (a whole tree, see :meth:`candidate_claims`).
        :returns: True, or False when Placement refused with 409 (the
            provider is used up, or the consumer exists already).
        """
        return self.try_claim(consumer, provider, resource_class,
                              project_id, user_id, resources)[0]

    def try_claim(self, consumer, provider, resource_class, project_id,
                  user_id, resources=None):
        """:meth:`claim`, with the error code of a refusal.

        :returns: ``(True, None)``, or ``(False, code)`` when Placement
            refused with 409: :data:`CONCURRENT_UPDATE` when the consumer
            exists already (or a provider changed meanwhile), another code
            when the providers cannot hold the claim (capacity).
        """
        if resources is None:
            resources = {provider: {resource_class: 1}}
        body = {'allocations': {rp: {'resources': dict(amounts)}
                                for rp, amounts in resources.items()},
                'project_id': project_id, 'user_id': user_id,
                'consumer_generation': None}
        resp = self._call('PUT', '/allocations/%s' % consumer, (204, 409),
                          body=body)
        if resp.status_code == 204:
            return True, None
        return False, _error(resp)[1]

    def claim_many(self, claims, project_id, user_id):
        """Allocate to several new consumers at once, all or none.

        One ``POST /allocations``: Placement writes every consumer's
        allocations in one transaction.

        :param claims: ``{consumer UUID: {provider UUID: {class:
            amount}}}``.
        :returns: True, or False when Placement refused with 409 (a
            provider is used up, or a consumer exists already); nothing
            was allocated then.
        """
        body = {consumer: {'allocations': {rp: {'resources': dict(amounts)}
                                           for rp, amounts
                                           in resources.items()},
                           'project_id': project_id, 'user_id': user_id,
                           'consumer_generation': None}
                for consumer, resources in claims.items()}
        resp = self._call('POST', '/allocations', (204, 409), body=body)
        return resp.status_code == 204

    def get_claim(self, consumer):
        """{provider UUID: {resource class: amount}} of the consumer."""
        body = self._call('GET', '/allocations/%s' % consumer,
                          (200,)).json()
        return {rp: value['resources']
                for rp, value in body['allocations'].items()}

    def delete_claim(self, consumer):
        """Delete every allocation of ``consumer``; True when it had any."""
        resp = self._call('DELETE', '/allocations/%s' % consumer,
                          (204, 404))
        return resp.status_code == 204
