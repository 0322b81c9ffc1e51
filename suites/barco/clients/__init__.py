"""The Barco client scenarios as HTTP steps (steps.py) and the httpx driver that runs them in a child process
(suites/barco/test_clients.py runs curl's requests itself, one curl process each)."""
