# One image for every Plumbline service: `plumbline run --target <svc>`.
# The Python base (both stages): any Debian-based image laid out like python:3.11-slim.
ARG PYTHON_IMAGE=python:3.11-slim
FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml ./
# The code generation's tools (grpcio-tools and mypy-protobuf's protoc plugins) are the
# `proto` extra of pyproject.toml: read from there, so the two never drift apart.
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['proto']))" > proto-tools.txt \
 && pip install --no-cache-dir -r proto-tools.txt \
 && rm proto-tools.txt
COPY proto proto
COPY src src
RUN python src/plumbline/protogen.py proto src \
 && pip wheel --no-cache-dir --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
RUN useradd --uid 10001 --create-home --shell /usr/sbin/nologin plumbline
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER 10001
ENV PLUMBLINE_DATA_DIR=/tmp/plumbline PYTHONUNBUFFERED=1
EXPOSE 8080 9090
ENTRYPOINT ["plumbline"]
CMD ["run", "--target", "all"]
