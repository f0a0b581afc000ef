<?php

declare(strict_types=1);

namespace Toolgate;

/** A tool registered after the table was compiled, with its live metadata. */
final class LiveTool implements \JsonSerializable
{
    public function __construct(
        public readonly string $name,
        public readonly string $group,
        public readonly bool $remote,
        public readonly bool $enabled,
        public readonly bool $adminOnly,
        /** Null: the group's default class, else the most sensitive. */
        public readonly ?string $class = null,
    ) {
    }

    /** @return array{name:string,group:string,remote:bool,enabled:bool,adminOnly:bool,class:?string} */
    public function jsonSerialize(): array
    {
        return ['name' => $this->name, 'group' => $this->group, 'remote' => $this->remote,
            'enabled' => $this->enabled, 'adminOnly' => $this->adminOnly, 'class' => $this->class];
    }
}
