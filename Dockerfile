# syntax=docker/dockerfile:1
# duet in a container. The build stage is a Debian 12 machine set up and built by
# scripts/setup itself (the same packages and commands as a checkout; the tests are not built),
# then installed with `cmake --install`; the runtime stage is debian:bookworm-slim with the
# binary (the chat page is inside it), the few libraries it links, and curl for the health
# check, running as an unprivileged user and serving on 0.0.0.0:8080.
#   docker build -t duet .
#   docker run --rm -p 127.0.0.1:8080:8080 -v /srv/models:/models:ro duet -m /models/Qwen3-8B-Q4_K_M.gguf
# Arguments after the image name are flags of `duet serve`; DUET_<FLAG> variables work too
# (-e DUET_MODEL=... -e DUET_API_KEY=key1,key2). compose.yaml puts nginx in front.

FROM debian:bookworm-slim AS build
WORKDIR /src
COPY . .
# ccache's cache survives between builds of the image (BuildKit).
RUN --mount=type=cache,target=/root/.cache/ccache \
    DUET_CMAKE_ARGS="-DDUET_TESTS=OFF" scripts/setup \
 && DESTDIR=/staging cmake --install build --prefix /usr

FROM debian:bookworm-slim
# The libraries build/duet links (libedit, utf8proc, the Vulkan loader; a GPU also needs its
# driver's Vulkan ICD, e.g. from the NVIDIA container toolkit), curl for HEALTHCHECK.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libedit2 libutf8proc2 libvulkan1 curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --home-dir /var/lib/duet --create-home \
      --shell /usr/sbin/nologin duet
COPY --from=build /staging/usr/bin/duet /usr/bin/duet
ENV DUET_HOME=/var/lib/duet
WORKDIR /var/lib/duet
USER 10001:10001
EXPOSE 8080
# /ready is 200 once the model is loaded (a large one may take minutes: the start period). A
# keyed server needs a key on /ready too: the first of DUET_API_KEY, or DUET_HEALTHCHECK_KEY
# when the keys come from a file.
HEALTHCHECK --interval=15s --timeout=5s --start-period=5m --retries=3 \
  CMD curl -fsS -o /dev/null -H "Authorization: Bearer ${DUET_HEALTHCHECK_KEY:-${DUET_API_KEY%%,*}}" \
      http://127.0.0.1:8080/ready || exit 1
# SIGTERM drains (in-flight replies get --drain-seconds, 30 by default): give `docker stop` a
# longer -t than that.
STOPSIGNAL SIGTERM
ENTRYPOINT ["duet", "serve", "--host", "0.0.0.0", "--port", "8080"]
CMD []
