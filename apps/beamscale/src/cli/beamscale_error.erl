%% @doc The one error path, as rebar3 has it: a reason `{Module, Reason}' made by `Module' is put
%% in words by `Module:format_error(Reason)'; anything else is printed as a bounded term.
%%
%% Module names come from our own code: a reason's first element is only looked up (an atom
%% that exists already), never made from input. A formatter that fails on a reason it does not
%% know gives the bounded term instead of a crash in the error path.
-module(beamscale_error).

-export([format/1, format/2]).

%% What a reason printed as a term may take, so a huge reason cannot flood the terminal.
-define(CHARS_LIMIT, 500).

%% @doc One line for any error reason: `{Module, R}' by `Module:format_error(R)', where
%% `Module' exports it; `{error, {Module, R}}' likewise; else the reason as a bounded term.
-spec format(term()) -> unicode:unicode_binary().
format({error, Inner} = Reason) ->
    case is_wrapped(Inner) of
        true -> format(Inner);
        false -> fallback(Reason)
    end;
format({Module, Inner} = Reason) when is_atom(Module) ->
    case has_formatter(Module) of
        true -> call(Module, Inner, Reason);
        false -> fallback(Reason)
    end;
format(Reason) -> fallback(Reason).

%% @doc One line for an error `Owner' (a command or a study) returned: another module's
%% `{Module, R}' goes to that module; the owner's own reasons to `Owner:format_error/1'.
-spec format(module(), term()) -> unicode:unicode_binary().
format(Owner, Reason) ->
    case is_wrapped(Reason) of
        true -> format(Reason);
        false -> call(Owner, Reason, Reason)
    end.

%%% Internals

is_wrapped({Module, _}) when is_atom(Module) -> has_formatter(Module);
is_wrapped(_) -> false.

%% In an escript or an interactive node a module is loaded on first call: load it to see.
has_formatter(Module) ->
    (erlang:module_loaded(Module) orelse code:ensure_loaded(Module) =:= {module, Module})
        andalso erlang:function_exported(Module, format_error, 1).

%% The text must be characters; a formatter without a clause for `Reason' may still name the
%% cause, when `Reason' is itself another module's reason (wrapped once more).
call(Module, Reason, Whole) ->
    try unicode:characters_to_binary(Module:format_error(Reason)) of
        Text when is_binary(Text) -> Text;
        _ -> fallback(Whole)
    catch _:_ ->
        case is_wrapped(Reason) of
            true -> format(Reason);
            false -> fallback(Whole)
        end
    end.

fallback(Reason) ->
    unicode:characters_to_binary(io_lib:format("~0tp", [Reason], [{chars_limit, ?CHARS_LIMIT}])).
