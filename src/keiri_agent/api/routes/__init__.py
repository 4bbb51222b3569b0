"""The API's routers, one module per product (each a thin layer over a service)."""
