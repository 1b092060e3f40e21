"""The text of GET /allocation_candidates: written from fragments
(``candidates_json``), it is exactly the JSON encoding of the answer's
objects, at every microversion's shape, and a long answer is streamed
without a length, with the same text."""

import json
import logging
from unittest import mock

import fixtures

from alloc_framework.api.placement import candidates_json
from alloc_framework.common import exception
from tests.functional.api.placement import base

QUERY = '/allocation_candidates?resources=VCPU:1,DISK_GB:10'


class CandidatesTextTestCase(base.PlacementAppTestCase):

    def setUp(self):
        super().setUp()
        for trait in ('CUSTOM_A', 'CUSTOM_B'):
            self.assertEqual(201, self.request(
                'PUT', '/traits/%s' % trait).status_code)
        agg = '5e6c2a44-2a1f-4f55-a6a4-8c1b2f3f0b11'
        # Traits given out of their creation order: summaries list them
        # in that order.
        self.root = self.create_provider(
            'root', {'VCPU': {'total': 8, 'reserved': 1,
                              'allocation_ratio': 2.0},
                     'MEMORY_MB': {'total': 4096}},
            traits=['CUSTOM_B', 'CUSTOM_A'], aggs=[agg])
        self.numa = self.create_provider(
            'numa', {'VCPU': {'total': 4}}, parent=self.root)
        self.disk = self.create_provider(
            'disk', {'DISK_GB': {'total': 100}},
            traits=['MISC_SHARES_VIA_AGGREGATE'], aggs=[agg])

    def _text(self, version, query=QUERY):
        """The answer's Content-Length (None when streamed) and text."""
        resp = self.request('GET', query, version=version)
        # Before the body is read (reading it sets the length).
        length = resp.headers.get('Content-Length')
        self.assertEqual(200, resp.status_code, resp.text)
        return length, resp.body.decode('utf-8')

    def test_text_is_the_json_encoding_at_each_version(self):
        for version in ('1.10', '1.12', '1.17', '1.27', '1.29', '1.34',
                        '1.39'):
            _resp, text = self._text(version)
            answer = json.loads(text)
            # The same text as encoding the objects, member for member.
            self.assertEqual(json.dumps(answer), text, version)
            self.assertTrue(answer['allocation_requests'], version)
        # What the summaries say (1.29: every provider of the trees).
        answer = json.loads(self._text('1.29')[1])
        root = answer['provider_summaries'][self.root]
        # Every class of the inventory from 1.27.
        self.assertEqual({'VCPU': {'capacity': 14, 'used': 0},
                          'MEMORY_MB': {'capacity': 4096, 'used': 0}},
                         root['resources'])
        self.assertEqual(['CUSTOM_A', 'CUSTOM_B'], root['traits'])
        self.assertIsNone(root['parent_provider_uuid'])
        self.assertEqual(self.root, answer['provider_summaries'][
            self.numa]['parent_provider_uuid'])
        # The two VCPU providers, each with the sharing disk.
        self.assertEqual(
            [{self.root: {'resources': {'VCPU': 1}},
              self.disk: {'resources': {'DISK_GB': 10}}},
             {self.numa: {'resources': {'VCPU': 1}},
              self.disk: {'resources': {'DISK_GB': 10}}}],
            [r['allocations'] for r in answer['allocation_requests']])
        # Before 1.12 a list of providers and resources.
        answer = json.loads(self._text('1.10')[1])
        self.assertEqual(
            [{'resource_provider': {'uuid': self.disk},
              'resources': {'DISK_GB': 10}},
             {'resource_provider': {'uuid': self.root},
              'resources': {'VCPU': 1}}],
            sorted(answer['allocation_requests'][0]['allocations'],
                   key=lambda a: list(a['resources'])))
        # From 1.34 the providers of each group.
        answer = json.loads(self._text('1.34')[1])
        self.assertEqual({'': sorted([self.root, self.disk])}, {
            k: sorted(v) for k, v in
            answer['allocation_requests'][0]['mappings'].items()})

    def test_long_answer_is_streamed_with_the_same_text(self):
        query = QUERY + '&explain=true'
        length, text = self._text('1.39', query)
        self.assertEqual(str(len(text)), length)
        with mock.patch.object(candidates_json, 'CHUNK', 64):
            length, streamed = self._text('1.39', query)
        self.assertIsNone(length)
        self.assertEqual(text, streamed)
        # Before 1.27 only the requested classes are summarised.
        answer = json.loads(self._text('1.26')[1])
        self.assertEqual({'VCPU': {'capacity': 14, 'used': 0}},
                         answer['provider_summaries'][self.root][
                             'resources'])

    def _deadline_at_chunk(self, number):
        """Chunks of 64 characters, the deadline passing as chunk
        ``number`` (from 1) is about to be made."""
        real = candidates_json.AnswerEncoder.chunks
        made = []

        def check():
            made.append(None)
            if len(made) >= number:
                raise exception.DeadlineExceeded(
                    limit=1, option='[placement] candidates_deadline')

        def chunks(encoder, candidates, providers, extra=(), check_=None):
            return real(encoder, candidates, providers, extra, check)

        self.useFixture(fixtures.MockPatchObject(
            candidates_json, 'CHUNK', 64))
        self.useFixture(fixtures.MockPatchObject(
            candidates_json.AnswerEncoder, 'chunks', chunks))

    def test_deadline_before_the_answer_is_sent_is_503(self):
        # The first two chunks are made before the status is sent.
        self._deadline_at_chunk(2)
        resp = self.request('GET', QUERY, version='1.39')
        self.assertEqual(503, resp.status_code)
        self.assertEqual('placement.query.deadline',
                         resp.json['errors'][0]['code'])

    def test_deadline_while_the_answer_is_sent_cuts_it_short(self):
        log = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self._deadline_at_chunk(3)
        resp = self.request('GET', QUERY, version='1.39')
        # The status is sent by then: the answer stops short, which a
        # server shows by closing the connection before its end.
        self.assertEqual(200, resp.status_code)
        self.assertRaises(exception.DeadlineExceeded, lambda: resp.body)
        self.assertIn('the answer was cut short', log.output)
