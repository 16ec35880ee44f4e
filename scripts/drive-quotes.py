#!/usr/bin/env python3
"""Sends N quotes (POST /bridge/quote/user) one after the other on one keep-alive connection to 127.0.0.1:PORT
and checks each answer is 200: a fixed amount of work, for instruction counts (scripts/profile-proxy.sh).

    scripts/drive-quotes.py PORT TOKEN N
"""
import http.client
import sys

BODY = ('{"token":"USDC","chainIn":"ETHEREUM","chainOut":"BASE","amount":"100","mode":"pay",'
        '"depositor":"0x1111111111111111111111111111111111111111",'
        '"recipient":"0x2222222222222222222222222222222222222222"}')

port, token, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
for i in range(n):
    connection.request("POST", "/bridge/quote/user", BODY, headers)
    answer = connection.getresponse()
    body = answer.read()
    if answer.status != 200:
        sys.exit(f"quote {i}: {answer.status} {body[:300]!r}")
    if answer.getheader("x-contract-violations"):
        sys.exit(f"quote {i}: violations {answer.getheader('x-contract-violations')}")
print(f"{n} quotes answered 200")
