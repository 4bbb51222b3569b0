"""The schema revisions of the application database, oldest first."""
