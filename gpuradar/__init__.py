"""The command line and the wiring of the running application: the one place that joins core, scrapers, bot."""
