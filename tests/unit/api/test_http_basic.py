"""The htpasswd checker shared by both APIs: reading, reloading, caching."""

import logging
import os
from unittest import mock

import bcrypt
import fixtures

from alloc_framework.api import http_basic
from tests import base


def bcrypt_hash(password, rounds=4):
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds)).decode()


class _HtpasswdTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.path = os.path.join(self.state_path, 'htpasswd')
        self.alice = bcrypt_hash('secret')
        self.write('alice:%s\n' % self.alice)
        self.logger = self.useFixture(fixtures.FakeLogger(
            level=logging.INFO))

    def write(self, text):
        with open(self.path, 'w') as stream:
            stream.write(text)
        # A rewrite within the file system's time granularity must still
        # look changed.
        stat = os.stat(self.path)
        os.utime(self.path, ns=(stat.st_atime_ns,
                                stat.st_mtime_ns + 1000000))


class ReadHtpasswdTestCase(_HtpasswdTestCase):

    def test_users_comments_and_apache_prefix(self):
        apache = '$2y$' + self.alice[4:]
        self.write('# users\n\nalice:%s\n  bob:%s  \n' % (self.alice, apache))
        self.assertEqual({'alice': self.alice.encode(),
                          'bob': apache.encode()},
                         http_basic.read_htpasswd(self.path))

    def test_bad_files(self):
        for text in ('alice:{SHA}abcdef\n',          # not bcrypt
                     'alice:$apr1$abc$def\n',         # MD5
                     'alice\n',                       # no hash
                     'alice:$2y$04$tooshort\n',       # truncated bcrypt
                     'alice:%s\nbob:plain\n' % self.alice):
            self.write(text)
            exc = self.assertRaises(http_basic.HtpasswdError,
                                    http_basic.read_htpasswd, self.path)
            self.assertIn('only bcrypt (htpasswd -B) is supported', str(exc))

    def test_missing_file(self):
        os.unlink(self.path)
        exc = self.assertRaises(http_basic.HtpasswdError,
                                http_basic.read_htpasswd, self.path)
        self.assertIn('Cannot read the htpasswd file %s' % self.path,
                      str(exc))


class HtpasswdAuthTestCase(_HtpasswdTestCase):

    def setUp(self):
        super().setUp()
        self.auth = http_basic.HtpasswdAuth(self.path, cache_ttl=60)
        self.checkpw = self.useFixture(fixtures.MockPatch(
            'bcrypt.checkpw', side_effect=bcrypt.checkpw)).mock

    def test_bad_file_at_start(self):
        self.write('alice:{SHA}abcdef\n')
        self.assertRaises(http_basic.HtpasswdError, http_basic.HtpasswdAuth,
                          self.path)

    def test_check(self):
        self.assertTrue(self.auth.check('alice', b'secret'))
        self.assertFalse(self.auth.check('alice', b'nope'))
        self.assertFalse(self.auth.check('mallory', b'secret'))
        self.assertFalse(self.auth.check('alice', b'x' * 100))

    def test_success_is_cached(self):
        for _ in range(5):
            self.assertTrue(self.auth.check('alice', b'secret'))
        self.assertEqual(1, self.checkpw.call_count)
        # Another password is checked, and failures are never cached.
        for _ in range(2):
            self.assertFalse(self.auth.check('alice', b'secreT'))
        self.assertEqual(3, self.checkpw.call_count)

    def test_cache_keeps_no_credentials(self):
        self.auth.check('alice', b'secret')
        (key,) = self.auth._cache
        self.assertEqual(32, len(key))
        self.assertNotIn(b'secret', key)
        self.assertNotIn(b'alice', key)
        # Keyed per process: another checker computes another key.
        other = http_basic.HtpasswdAuth(self.path)
        self.assertNotEqual(key, other._cache_key('alice', b'secret'))
        # The user name's length is part of the key: no shifting of
        # characters between user name and password.
        self.assertNotEqual(self.auth._cache_key('ab', b'c'),
                            self.auth._cache_key('a', b'bc'))

    def test_cache_expires(self):
        with mock.patch('time.monotonic', return_value=1000.0):
            self.assertTrue(self.auth.check('alice', b'secret'))
        with mock.patch('time.monotonic', return_value=1059.0):
            self.assertTrue(self.auth.check('alice', b'secret'))
        self.assertEqual(1, self.checkpw.call_count)
        with mock.patch('time.monotonic', return_value=1061.0):
            self.assertTrue(self.auth.check('alice', b'secret'))
        self.assertEqual(2, self.checkpw.call_count)

    def test_no_cache(self):
        auth = http_basic.HtpasswdAuth(self.path, cache_ttl=0)
        for _ in range(3):
            self.assertTrue(auth.check('alice', b'secret'))
        self.assertEqual(3, self.checkpw.call_count)

    def test_unknown_user_costs_a_check_of_the_same_cost(self):
        self.write('alice:%s\nbob:%s\n' % (self.alice,
                                           bcrypt_hash('x', rounds=5)))
        self.assertFalse(self.auth.check('mallory', b'secret'))
        self.assertFalse(self.auth.check('alice', b'nope'))
        calls = self.checkpw.call_args_list
        (_pw, unknown), (_pw2, known) = [call.args for call in calls]
        # The dummy hash has the highest cost of the file.
        self.assertTrue(unknown.startswith(b'$2b$05$'), unknown)
        self.assertTrue(known.startswith(b'$2b$04$'), known)

    def test_changed_file_is_read_and_forgets_the_cache(self):
        self.assertTrue(self.auth.check('alice', b'secret'))
        self.write('bob:%s\n' % bcrypt_hash('other'))
        self.assertFalse(self.auth.check('alice', b'secret'))
        self.assertTrue(self.auth.check('bob', b'other'))
        self.assertIn('Read 1 users from %s' % self.path, self.logger.output)

    def test_removed_file_keeps_the_last_good_one(self):
        self.assertTrue(self.auth.check('alice', b'secret'))
        os.unlink(self.path)
        for _ in range(3):
            self.assertTrue(self.auth.check('alice', b'secret'))
            self.assertFalse(self.auth.check('alice', b'nope'))
        # Logged once, not at every request.
        self.assertEqual(1, self.logger.output.count(
            'Cannot read the htpasswd file'))
        self.assertIn('the 1 users read from it before are still accepted',
                      self.logger.output)
        # Back again: read again.
        self.write('bob:%s\n' % bcrypt_hash('other'))
        self.assertTrue(self.auth.check('bob', b'other'))
        self.assertFalse(self.auth.check('alice', b'secret'))

    def test_broken_file_keeps_the_last_good_one(self):
        self.write('alice:{SHA}abcdef\nbob:%s\n' % bcrypt_hash('other'))
        self.assertTrue(self.auth.check('alice', b'secret'))
        self.assertFalse(self.auth.check('bob', b'other'))
        self.assertEqual(1, self.logger.output.count('line 1: not a'))
