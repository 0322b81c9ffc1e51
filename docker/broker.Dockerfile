# The reference broker as a CI service: every personality on its default port (Kafka 9092, Fluvio SPU 9005 and
# SC 9003, Pravega 12345 and its controller 9090, Barco 9250-9254, RustLog 7070), in memory.
# Build from a checkout: docker build -f docker/broker.Dockerfile -t wirecheck-broker .
FROM python:3.11-slim AS wheel
WORKDIR /src
COPY . .
# The broker's own dependencies are pyproject's "broker" extra: the image takes those alone (no pytest, Hypothesis
# or scapy, which only the suite imports).
RUN pip wheel --no-cache-dir --no-deps -w /dist . \
 && python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['broker']))" > /dist/broker-requirements.txt

FROM python:3.11-slim
COPY --from=wheel /dist /dist
RUN pip install --no-cache-dir --no-deps /dist/*.whl && pip install --no-cache-dir -r /dist/broker-requirements.txt \
 && rm -rf /dist && useradd --uid 10001 --create-home broker
USER 10001
EXPOSE 9092 9005 9003 12345 9090 9250 9251 9252 9254 7070
# Every interface of the container: the service is reached from other containers.
ENTRYPOINT ["wirecheck-broker"]
CMD ["--host", "0.0.0.0"]
