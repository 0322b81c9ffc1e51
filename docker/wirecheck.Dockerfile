# wirecheck, the tool: docker run --network host -v "$PWD/out:/reports" wirecheck --target kafka=127.0.0.1:9092
# Build from a checkout: docker build -f docker/wirecheck.Dockerfile -t wirecheck .
FROM python:3.11-slim AS wheel
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --no-deps -w /dist .

FROM python:3.11-slim
COPY --from=wheel /dist /dist
RUN pip install --no-cache-dir /dist/*.whl && rm -rf /dist \
    && useradd --uid 10001 --create-home wirecheck && mkdir /reports && chown 10001 /reports
USER 10001
WORKDIR /reports
# Leading words pick suites (kafka, fluvio, ...); everything else is a pytest / wirecheck option.
ENTRYPOINT ["wirecheck", "run"]
CMD ["--help"]
