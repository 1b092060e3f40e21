"""The enginefacade helpers of alloc_framework.db.api."""

from oslo_db import exception as db_exc

from alloc_framework.db import api as db_api
from tests import base


class RetryOnDeadlockTestCase(base.TestCase):

    def test_retries_deadlock_victims(self):
        attempts = []

        @db_api.retry_on_deadlock
        def work(value):
            attempts.append(value)
            if len(attempts) < 3:
                raise db_exc.DBDeadlock()
            return value * 2

        self.assertEqual(42, work(21))
        self.assertEqual([21, 21, 21], attempts)

    def test_gives_up_after_the_last_attempt(self):
        attempts = []

        @db_api.retry_on_deadlock
        def work():
            attempts.append(1)
            raise db_exc.DBDeadlock()

        self.assertRaises(db_exc.DBDeadlock, work)
        self.assertEqual(db_api.DEADLOCK_RETRIES, len(attempts))

    def test_other_errors_are_not_retried(self):
        attempts = []

        @db_api.retry_on_deadlock
        def work():
            attempts.append(1)
            raise db_exc.DBDuplicateEntry()

        self.assertRaises(db_exc.DBDuplicateEntry, work)
        self.assertEqual(1, len(attempts))
