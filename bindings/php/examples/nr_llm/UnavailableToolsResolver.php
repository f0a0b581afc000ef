<?php

declare(strict_types=1);

namespace Toolgate\Examples\NrLlm;

use Toolgate\Context;
use Toolgate\LiveTool;

/**
 * What nr_llm puts into the request: the tools the model is offered, and a
 * system-prompt section naming the tools that exist but are not available in
 * this conversation, and why (so the model can tell the user instead of
 * guessing). Tools the extension registered after the table was compiled are
 * gated by their live metadata.
 */
final class UnavailableToolsResolver
{
    /**
     * @param list<LiveTool> $liveTools tools registered since the table was compiled
     * @return array{offered:list<string>,prompt:string}
     */
    public function resolve(Context $context, array $liveTools = []): array
    {
        $offered = $context->offered();
        foreach ($liveTools as $tool) {
            if ($context->table()->toolId($tool->name) === null && $context->decideLive($tool)->allowed) {
                $offered[] = $tool->name;
            }
        }
        // The library renders the section (names escaped, live tools after
        // the table's): no line of it is built here.
        $prompt = $context->unavailablePrompt($liveTools);
        return ['offered' => $offered, 'prompt' => $prompt];
    }
}
