"""JSON request bodies of the Placement API."""

import testtools
import webob.exc

from alloc_framework.api.placement import content


class ExtractJsonTestCase(testtools.TestCase):

    def test_extract_json_names_the_field(self):
        schema = {'type': 'object',
                  'properties': {'total': {'type': 'integer'}},
                  'additionalProperties': False}
        exc = self.assertRaises(webob.exc.HTTPBadRequest,
                                content.extract_json, b'{"total": "x"}',
                                schema)
        self.assertIn('total', str(exc))
        self.assertRaises(webob.exc.HTTPBadRequest, content.extract_json,
                          b'{', schema)
