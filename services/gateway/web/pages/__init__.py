"""What the HTML pages show, read from the database with a fixed number of queries per page.

Each module builds one page's data (front page, bot page, game page, training pages); the views in
services.gateway.web.views only parse the request and render a template with it.
"""
