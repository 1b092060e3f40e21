"""Request body validation of the bare metal API."""
