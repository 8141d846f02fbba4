# The extension in the official php image: built in a stage with Rust and libclang by
# docker-php-ext-install, then only the module and its ini go into the runtime stage.
#   docker build --build-arg PHP=8.4-fpm-bookworm -t my-php-with-redis-lock .
# The build stage's PHP must be the runtime's (same version, same NTS/ZTS).
ARG PHP=8.4-fpm-bookworm

FROM php:${PHP} AS redis-lock
RUN apt-get update \
 && apt-get install -y --no-install-recommends curl libclang-dev \
 && curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
ENV PATH=/root/.cargo/bin:$PATH
COPY . /usr/src/redis-lock
RUN docker-php-ext-install /usr/src/redis-lock/phpize

FROM php:${PHP}
COPY --from=redis-lock /usr/local/lib/php/extensions/ /usr/local/lib/php/extensions/
COPY --from=redis-lock /usr/local/etc/php/conf.d/docker-php-ext-redis_lock.ini /usr/local/etc/php/conf.d/
