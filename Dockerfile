# One image for every Plumbline service: `plumbline run --target <svc>`.
FROM python:3.11-slim AS build
WORKDIR /src
RUN pip install --no-cache-dir "grpcio-tools>=1.64"
COPY pyproject.toml ./
COPY proto proto
COPY src src
RUN python src/plumbline/protogen.py proto src \
 && pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --uid 10001 --create-home --shell /usr/sbin/nologin plumbline
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER 10001
ENV PLUMBLINE_DATA_DIR=/tmp/plumbline PYTHONUNBUFFERED=1
EXPOSE 8080 9090
ENTRYPOINT ["plumbline"]
CMD ["run", "--target", "all"]
