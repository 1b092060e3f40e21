# Importing the package selects oslo.service's threading backend; do it
# before any test module imports an oslo library (oslo.versionedobjects'
# fixture pulls in oslo.messaging, which would otherwise pick eventlet).
import alloc_framework  # noqa: F401
