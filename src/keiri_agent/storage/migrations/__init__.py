"""The Alembic environment of the application database (applied by ``storage.migrate``)."""
