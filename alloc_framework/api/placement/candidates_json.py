"""The JSON text of a ``GET /allocation_candidates`` answer, in pieces.

The answer of a large search (every candidate of a cloud) is megabytes
of text. It is written here straight from the search's candidates and
providers, without a dict per candidate or per provider summary: the
names of classes and traits and the uuids of providers are encoded once
each, and every allocation request and summary is assembled from those
fragments. :meth:`AnswerEncoder.chunks` yields the text in chunks of
about ``CHUNK`` characters, so that the application can send the answer
while writing it (``handlers.allocation_candidate``) instead of holding
all of it, twice (text and bytes), before the first byte.

The text is exactly what ``json.dumps`` of the nested objects gives with
the default separators (``", "``, ``": "``), key for key and in the same
order, which ``tests/functional/api/placement/test_candidates_json.py``
checks against that encoding.
"""

import json

from alloc_framework.api.placement import microversion

# About this many characters of text per chunk sent.
CHUNK = 64 * 1024
# Items (allocation requests, summaries) are encoded by batches of one
# per this many characters of a chunk: one for chunks this small.
_BATCH_TEXT = 1024

_text = json.JSONEncoder().encode
# What _text gives of a str (JSONEncoder.encode of a str is this call).
_string = json.encoder.encode_basestring_ascii


class AnswerEncoder:
    """Encodes the allocation requests and provider summaries of one
    answer, for the microversion ``want``.

    :param rc_names: ``{resource class id: name}`` of every class of the
        providers (resolved before the answer starts: nothing here reads
        the database).
    :param trait_names: ``{trait id: name}`` of every trait of them.
    :param requested: the names of the requested classes (summaries list
        only those before 1.27).
    """

    def __init__(self, want, rc_names, trait_names, requested):
        self.as_dict = want.matches(microversion.ALLOCATIONS_DICT)
        self.mappings = want.matches(microversion.ALLOCATION_MAPPINGS)
        self.with_traits = want.matches(microversion.CANDIDATES_REQUIRED)
        self.nested = want.matches(microversion.CANDIDATES_NESTED)
        all_classes = want.matches(microversion.SUMMARIES_ALL_RESOURCES)
        self._rc = {i: _text(n) for i, n in rc_names.items()}
        # The classes a summary shows.
        self._shown = {i for i, n in rc_names.items()
                       if all_classes or n in requested}
        self._trait = {i: _text(n) for i, n in trait_names.items()}
        # {trait ids: their JSON list}: many providers share their traits.
        self._trait_lists = {}
        # {class id: the format of its summary, of capacity and used}
        self._resource = {
            i: '%s: {"capacity": %%d, "used": %%d}' % (
                self._rc[i].replace('%', '%%'))
            for i in self._shown}
        # The format of a summary, of its uuid, its resources and the
        # members of this version (traits, parent and root uuids).
        self._summary = '%s: {"resources": {%s}'
        if self.with_traits:
            self._summary += ', "traits": [%s]'
        if self.nested:
            self._summary += (', "parent_provider_uuid": %s, '
                              '"root_provider_uuid": %s')
        self._summary += '}'
        # {group: the text of an allocation request of a SingleCandidate
        # of that group, split where the provider's uuid goes}
        self._single = {}

    def _single_pieces(self, group):
        """The text of the allocation request of a SingleCandidate of
        ``group``, split where the uuid of its provider goes (the same
        text as for the equal Candidate)."""
        resources = '{%s}' % ', '.join(
            '%s: %d' % (self._rc[rc_id], amount)
            for rc_id, amount in group.ordered)
        if not self.as_dict:
            pieces = ['{"allocations": [{"resource_provider": {"uuid": ',
                      '}, "resources": %s}]}' % resources]
        elif not self.mappings:
            pieces = ['{"allocations": {',
                      ': {"resources": %s}}}' % resources]
        else:
            pieces = ['{"allocations": {',
                      ': {"resources": %s}}, "mappings": {%s: [' % (
                          resources, _text(group.suffix)),
                      ']}}']
        self._single[group] = pieces
        return pieces

    def allocation_request(self, candidate):
        """The JSON text of one candidate's allocation request."""
        rp = candidate.provider
        if rp is not None:
            pieces = self._single.get(candidate.group)
            if pieces is None:
                pieces = self._single_pieces(candidate.group)
            return _string(rp.uuid).join(pieces)
        by_provider = {}
        rc = self._rc
        for (rp, rc_id), amount in candidate.allocations.items():
            parts = by_provider.get(rp.uuid)
            if parts is None:
                parts = by_provider[rp.uuid] = []
            parts.append('%s: %d' % (rc[rc_id], amount))
        uuid = _string
        if not self.as_dict:
            return '{"allocations": [%s]}' % ', '.join([
                '{"resource_provider": {"uuid": %s}, "resources": {%s}}'
                % (uuid(u), ', '.join(parts))
                for u, parts in by_provider.items()])
        allocations = ', '.join([
            '%s: {"resources": {%s}}' % (uuid(u), ', '.join(parts))
            for u, parts in by_provider.items()])
        if not self.mappings:
            return '{"allocations": {%s}}' % allocations
        return '{"allocations": {%s}, "mappings": {%s}}' % (
            allocations, ', '.join([
                '%s: [%s]' % (_text(suffix),
                              ', '.join([uuid(rp.uuid) for rp in providers]))
                for suffix, providers in candidate.mappings.items()]))

    def provider_summary(self, rp):
        """The JSON text of ``"uuid": {summary}`` of one provider."""
        resource = self._resource
        used = rp.used
        resources = ', '.join([
            resource[rc_id] % (inv[3], used.get(rc_id, 0))
            for rc_id, inv in rp.inventories.items() if rc_id in resource])
        uuid = _string(rp.uuid)
        values = [uuid, resources]
        if self.with_traits:
            traits = self._trait_lists.get(rp.traits)
            if traits is None:
                # In the order the traits were created, as the reference.
                traits = self._trait_lists[rp.traits] = ', '.join(
                    [self._trait[t] for t in sorted(rp.traits)])
            values.append(traits)
        if self.nested:
            if rp.parent_uuid is None:
                # A root.
                values += ('null', uuid)
            else:
                values += (_string(rp.parent_uuid), _string(rp.root_uuid))
        return self._summary % tuple(values)

    def chunks(self, candidates, providers, extra=(), check=None):
        """Yield the text of the whole answer in chunks.

        :param candidates: the candidates, a list.
        :param providers: the providers to summarise, in order (a list).
        :param extra: more ``(name, JSON text)`` members of the answer.
        :param check: called before each chunk is made (the deadline).
        """
        pending = ['{"allocation_requests": [']
        size = 0

        def members(items, encode):
            # Each item's text after the last, in chunks of about CHUNK:
            # the items of a batch are encoded and joined at once (a
            # chunk holds about a hundred of them).
            nonlocal pending, size
            batch = max(1, CHUNK // _BATCH_TEXT)
            separator = ''
            for start in range(0, len(items), batch):
                text = ', '.join(map(encode, items[start:start + batch]))
                pending.append(separator + text)
                separator = ', '
                size += len(text)
                if size >= CHUNK:
                    if check is not None:
                        check()
                    yield ''.join(pending)
                    pending = []
                    size = 0

        yield from members(candidates, self.allocation_request)
        pending.append('], "provider_summaries": {')
        yield from members(providers, self.provider_summary)
        pending.append('}')
        for name, value in extra:
            pending.append(', %s: %s' % (_text(name), value))
        pending.append('}')
        if check is not None:
            check()
        yield ''.join(pending)
