<?php

declare(strict_types=1);

namespace Toolgate\Exception;

/** The bytes are not a table this runtime can load (the table stays unloaded; a reload keeps the current table). */
final class LoadException extends ToolgateException
{
}
