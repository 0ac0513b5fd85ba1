"""Schema of the local CRMArena org: the 16 objects of the original Salesforce org.

Source: CRMArena `schema_exports/original_schema*.json` (object and field lists) as summarised in
reference §1.3. Descriptions are our own wording. Table and column names are the Salesforce API
names, so an SQLite export of a real org with the same names loads unchanged.

Additions to the original field lists, all of which exist on the real Salesforce objects:

- ``Name`` on User, Account and Contact (Salesforce's read-only compound name), so that paths
  such as ``Owner.Name`` work as they do in a real org.
- ``PublishStatus`` and ``Language`` on Knowledge__kav: the original `search_knowledge_articles`
  tool filters on them (reference §1.3).

``OrderItem.PricebookEntryId`` is spelled as in Salesforce; the original schema export spells it
``PriceBookEntryId``. Field names are case-insensitive in SOQL, so both spellings resolve.
"""

from __future__ import annotations

__all__ = [
    "OBJECTS",
    "FIELD_TYPES",
    "KEY_PREFIXES",
    "RELATIONSHIPS",
    "SEARCH_FIELDS",
    "NAME_FIELDS",
    "REQUIRED_FIELDS",
    "TEXT_TYPES",
    "ID_TYPES",
    "NUMBER_TYPES",
    "relationship_name",
    "make_id",
    "to_18_char_id",
    "looks_like_id",
    "field_type",
    "EMAIL_FIELDS",
    "PHONE_FIELDS",
    "AUXILIARY_PREFIXES",
    "CATEGORY_NEEDS",
    "ORIGINAL_LAYOUT_DEFAULTS",
    "PICKLIST_VALUES",
]

# ---------------------------------------------------------------------------------------------
# Objects and fields (field API name -> description shown to the agent)
# ---------------------------------------------------------------------------------------------

OBJECTS: dict[str, dict[str, str]] = {
    "User": {
        "Id": "Unique identifier of the agent (User), prefix 005",
        "FirstName": "First name of the agent",
        "LastName": "Last name of the agent",
        "Name": "Full name of the agent (read-only, FirstName + LastName)",
        "Alias": "Short alias of the agent, usually derived from the name",
        "Email": "Email address of the agent",
        "Phone": "Phone number of the agent",
        "Username": "Unique Salesforce username of the agent",
        "TimeZoneSidKey": "Time zone, e.g. 'America/Los_Angeles'",
        "LocaleSidKey": "Locale, e.g. 'en_US'",
        "EmailEncodingKey": "Email encoding, usually 'UTF-8'",
        "LanguageLocaleKey": "Language locale, e.g. 'en_US'",
    },
    "Account": {
        "Id": "Unique identifier of the customer account (person account), prefix 001",
        "FirstName": "First name of the customer",
        "LastName": "Last name of the customer",
        "Name": "Full name of the customer (read-only, FirstName + LastName)",
        "PersonEmail": "Email address of the customer",
        "Phone": "Phone number of the customer",
        "RecordTypeId": "Record type Id, the 'Person Account' record type",
        "ShippingCity": "Shipping city of the customer",
        "ShippingState": "Shipping state of the customer, two-letter US state code",
    },
    "Contact": {
        "Id": "Unique identifier of the contact, prefix 003",
        "AccountId": "Account of this contact. References Account",
        "FirstName": "First name of the contact",
        "LastName": "Last name of the contact",
        "Name": "Full name of the contact (read-only, FirstName + LastName)",
        "Email": "Email address of the contact",
        "OwnerId": "Agent who owns the contact. References User",
    },
    "Case": {
        "Id": "Unique identifier of the case, prefix 500",
        "AccountId": "Customer account of the case. References Account",
        "ContactId": "Contact who raised the case. References Contact",
        "OwnerId": "The latest owner (agent) of the case. References User",
        "Status": "Status of the case: 'New', 'Working', 'Escalated' or 'Closed'",
        "Priority": "Priority of the case: 'Low', 'Medium', 'High' or 'Critical'",
        "Subject": "Subject line of the case",
        "Description": "Detailed description of the case",
        "CreatedDate": "When the case was created, datetime 'YYYY-MM-DDTHH:MM:SS.000+0000'",
        "ClosedDate": "When the case was closed (null while open), datetime",
        "IssueId__c": "Issue of the case. References Issue__c",
        "OrderItemId__c": "Order item the case is about. References OrderItem",
    },
    "Knowledge__kav": {
        "Id": "Unique identifier of the knowledge article version, prefix ka0",
        "Title": "Title of the knowledge article",
        "Summary": "Short summary of the article",
        "FAQ_Answer__c": "Content of the knowledge article",
        "UrlName": "Unique URL name of the article",
        "PublishStatus": "Publication status: 'Online', 'Draft' or 'Archived'",
        "Language": "Language of the article, e.g. 'en_US'",
    },
    "ProductCategory": {
        "Id": "Unique identifier of the product category, prefix 0ZG",
        "Name": "Name of the product category",
        "CatalogId": "Id of the catalog this category belongs to",
    },
    "Product2": {
        "Id": "Unique identifier of the product, prefix 01t",
        "Name": "Name of the product",
        "Description": "Description of the product",
        "IsActive": "Whether the product is active (boolean)",
        "External_ID__c": "External Id used for data mapping",
    },
    "ProductCategoryProduct": {
        "Id": "Unique identifier of the category assignment, prefix 0ZH",
        "ProductCategoryId": "The category. References ProductCategory",
        "ProductId": "The product. References Product2",
    },
    "Pricebook2": {
        "Id": "Unique identifier of the price book, prefix 01s",
        "Name": "Name of the price book",
        "Description": "Description of the price book",
        "IsActive": "Whether the price book is active (boolean)",
        "ValidFrom": "Start of validity, datetime",
        "ValidTo": "End of validity, datetime",
    },
    "PricebookEntry": {
        "Id": "Unique identifier of the price book entry, prefix 01u",
        "Pricebook2Id": "Price book of this entry. References Pricebook2",
        "Product2Id": "Product of this entry. References Product2",
        "UnitPrice": "Unit price of the product in this price book (USD)",
    },
    "Order": {
        "Id": "Unique identifier of the order, prefix 801",
        "AccountId": "Customer account that placed the order. References Account",
        "EffectiveDate": "Date of the order (purchase date), date 'YYYY-MM-DD'",
        "Pricebook2Id": "Price book used by the order. References Pricebook2",
        "Status": "Status of the order: 'Draft' or 'Activated'",
    },
    "OrderItem": {
        "Id": "Unique identifier of the order item, prefix 802",
        "OrderId": "Order this item belongs to. References Order",
        "PricebookEntryId": "Price book entry of this item. References PricebookEntry",
        "Product2Id": "Product of this item. References Product2",
        "Quantity": "Quantity ordered",
        "UnitPrice": "Unit price paid (USD)",
    },
    "EmailMessage": {
        "Id": "Unique identifier of the email, prefix 02s",
        "ParentId": "Case this email belongs to. References Case",
        "Subject": "Subject of the email",
        "TextBody": "Plain-text body of the email",
        "FromAddress": "Sender email address",
        "ToIds": "Ids of the recipients (comma-separated)",
        "MessageDate": "When the email was sent, datetime",
    },
    "LiveChatTranscript": {
        "Id": "Unique identifier of the chat transcript, prefix 570",
        "CaseId": "Case this chat belongs to. References Case",
        "AccountId": "Customer account. References Account",
        "ContactId": "Customer contact. References Contact",
        "OwnerId": "Agent who handled the chat. References User",
        "Body": "Full text of the chat transcript",
        "EndTime": "When the chat ended, datetime",
        "LiveChatVisitorId": "Id of the chat visitor record",
    },
    "Issue__c": {
        "Id": "Unique identifier of the issue, prefix a1M",
        "Name": "Name of the issue",
    },
    "CaseHistory__c": {
        "Id": "Unique identifier of the history entry, prefix a1N",
        "CaseId__c": "Case of this history entry. References Case",
        "Field__c": "Kind of change: 'Case Creation', 'Owner Assignment' or 'Case Closed'",
        "OldValue__c": "Previous owner (User Id) for 'Owner Assignment', else null",
        "NewValue__c": "New owner (User Id) for 'Owner Assignment', else null",
        "CreatedDate": "When the change happened, datetime",
    },
}

FIELD_TYPES: dict[str, dict[str, str]] = {
    "User": {"Id": "id", "Email": "email", "Phone": "phone"},
    "Account": {"Id": "id", "PersonEmail": "email", "Phone": "phone", "RecordTypeId": "reference"},
    "Contact": {"Id": "id", "AccountId": "reference", "Email": "email", "OwnerId": "reference"},
    "Case": {
        "Id": "id",
        "AccountId": "reference",
        "ContactId": "reference",
        "OwnerId": "reference",
        "Status": "picklist",
        "Priority": "picklist",
        "Description": "textarea",
        "CreatedDate": "datetime",
        "ClosedDate": "datetime",
        "IssueId__c": "reference",
        "OrderItemId__c": "reference",
    },
    "Knowledge__kav": {"Id": "id", "FAQ_Answer__c": "textarea", "Summary": "textarea"},
    "ProductCategory": {"Id": "id", "CatalogId": "reference"},
    "Product2": {"Id": "id", "Description": "textarea", "IsActive": "boolean"},
    "ProductCategoryProduct": {"Id": "id", "ProductCategoryId": "reference", "ProductId": "reference"},
    "Pricebook2": {
        "Id": "id",
        "IsActive": "boolean",
        "ValidFrom": "datetime",
        "ValidTo": "datetime",
    },
    "PricebookEntry": {
        "Id": "id",
        "Pricebook2Id": "reference",
        "Product2Id": "reference",
        "UnitPrice": "currency",
    },
    "Order": {
        "Id": "id",
        "AccountId": "reference",
        "EffectiveDate": "date",
        "Pricebook2Id": "reference",
        "Status": "picklist",
    },
    "OrderItem": {
        "Id": "id",
        "OrderId": "reference",
        "PricebookEntryId": "reference",
        "Product2Id": "reference",
        "Quantity": "double",
        "UnitPrice": "currency",
    },
    "EmailMessage": {
        "Id": "id",
        "ParentId": "reference",
        "TextBody": "textarea",
        "FromAddress": "email",
        "MessageDate": "datetime",
    },
    "LiveChatTranscript": {
        "Id": "id",
        "CaseId": "reference",
        "AccountId": "reference",
        "ContactId": "reference",
        "OwnerId": "reference",
        "Body": "textarea",
        "EndTime": "datetime",
        "LiveChatVisitorId": "reference",
    },
    "Issue__c": {"Id": "id"},
    "CaseHistory__c": {
        "Id": "id",
        "CaseId__c": "reference",
        "Field__c": "picklist",
        "CreatedDate": "datetime",
    },
}
"""Salesforce field types; any field not listed here is a plain ``string``."""

TEXT_TYPES = frozenset({"string", "textarea", "email", "phone", "picklist", "url"})
ID_TYPES = frozenset({"id", "reference"})
NUMBER_TYPES = frozenset({"double", "currency", "int", "percent"})

# ---------------------------------------------------------------------------------------------
# Key prefixes and ids
# ---------------------------------------------------------------------------------------------

KEY_PREFIXES: dict[str, str] = {
    "User": "005",
    "Account": "001",
    "Contact": "003",
    "Case": "500",
    "Knowledge__kav": "ka0",
    "ProductCategory": "0ZG",
    "Product2": "01t",
    # Chosen for the local org; the real prefix of ProductCategoryProduct is org-independent but
    # not needed by any task.
    "ProductCategoryProduct": "0ZH",
    "Pricebook2": "01s",
    "PricebookEntry": "01u",
    "Order": "801",
    "OrderItem": "802",
    "EmailMessage": "02s",
    "LiveChatTranscript": "570",
    # Custom objects get org-specific prefixes in Salesforce; these two are our choice
    # (a1M for Issue__c matches the original org, reference §1.3).
    "Issue__c": "a1M",
    "CaseHistory__c": "a1N",
}
"""Three-character key prefix of each object's 18-character record ids."""

AUXILIARY_PREFIXES: dict[str, str] = {
    "RecordType": "012",
    "LiveChatVisitor": "571",
    "ProdCatalog": "0ZS",
}
"""Prefixes of ids that point at objects outside the 16-object org (no foreign-key check)."""

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_CHECKSUM_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"


def to_18_char_id(id15: str) -> str:
    """Append Salesforce's three-character case-safe checksum to a 15-character id.

    Each 5-character chunk yields one suffix character: bit i is set when character i of the
    chunk is an upper-case letter (Salesforce's documented id conversion).

    Args:
        id15: A 15-character case-sensitive id (an 18-character id is returned unchanged).

    Returns:
        The 18-character id.
    """
    if len(id15) == 18:
        return id15
    if len(id15) != 15:
        raise ValueError(f"a Salesforce id has 15 or 18 characters, got {id15!r}")
    suffix = ""
    for chunk_start in range(0, 15, 5):
        bits = 0
        for offset, char in enumerate(id15[chunk_start : chunk_start + 5]):
            if "A" <= char <= "Z":
                bits |= 1 << offset
        suffix += _CHECKSUM_ALPHABET[bits]
    return id15 + suffix


def make_id(prefix: str, serial: int) -> str:
    """Build a deterministic 18-character id: prefix + pod ``Ws`` + 10 base-62 digits + checksum.

    Args:
        prefix: The object's 3-character key prefix.
        serial: A non-negative integer, unique per object (callers seed its offset).

    Returns:
        An 18-character alphanumeric id such as ``005Ws000001xSR9IAM``.
    """
    digits = ""
    value = serial
    for _ in range(10):
        value, remainder = divmod(value, 62)
        digits = _BASE62[remainder] + digits
    return to_18_char_id(prefix + "Ws" + digits)


def looks_like_id(text: str) -> bool:
    """Return True when ``text`` has the shape of a 15- or 18-character Salesforce id."""
    return len(text) in (15, 18) and text.isalnum() and text.isascii()


# ---------------------------------------------------------------------------------------------
# Relationships (child lookup field -> parent object)
# ---------------------------------------------------------------------------------------------

RELATIONSHIPS: dict[str, dict[str, str]] = {
    "Contact": {"AccountId": "Account", "OwnerId": "User"},
    "Case": {
        "AccountId": "Account",
        "ContactId": "Contact",
        "OwnerId": "User",
        "IssueId__c": "Issue__c",
        "OrderItemId__c": "OrderItem",
    },
    "ProductCategoryProduct": {"ProductCategoryId": "ProductCategory", "ProductId": "Product2"},
    "PricebookEntry": {"Pricebook2Id": "Pricebook2", "Product2Id": "Product2"},
    "Order": {"AccountId": "Account", "Pricebook2Id": "Pricebook2"},
    "OrderItem": {
        "OrderId": "Order",
        "PricebookEntryId": "PricebookEntry",
        "Product2Id": "Product2",
    },
    "EmailMessage": {"ParentId": "Case"},
    "LiveChatTranscript": {
        "CaseId": "Case",
        "AccountId": "Account",
        "ContactId": "Contact",
        "OwnerId": "User",
    },
    "CaseHistory__c": {"CaseId__c": "Case"},
}
"""Per object: lookup field -> parent object. Relationship names follow `relationship_name`."""


def relationship_name(field: str) -> str:
    """Name of the relationship behind a lookup field, as used in dotted SOQL paths.

    Salesforce convention: a standard ``XId`` field is traversed as ``X`` (``OwnerId`` ->
    ``Owner``, ``ParentId`` -> ``Parent``); a custom ``Foo__c`` field as ``Foo__r``
    (``IssueId__c`` -> ``IssueId__r``).

    Args:
        field: Lookup field API name.

    Returns:
        The relationship name.
    """
    if field.endswith("__c"):
        return field[:-3] + "__r"
    if field.endswith("Id"):
        return field[:-2]
    return field


# ---------------------------------------------------------------------------------------------
# Search (SOSL) and validation metadata
# ---------------------------------------------------------------------------------------------

SEARCH_FIELDS: dict[str, tuple[str, ...]] = {
    "Product2": ("Name", "Description"),
    "Knowledge__kav": ("Title", "Summary", "FAQ_Answer__c"),
    "Account": ("Name", "FirstName", "LastName", "PersonEmail", "Phone", "ShippingCity", "ShippingState"),
    "Contact": ("Name", "FirstName", "LastName", "Email"),
    "Case": ("Subject", "Description"),
}
"""Fields indexed for SOSL ``IN ALL FIELDS`` (one FTS5 table per object)."""

NAME_FIELDS: dict[str, tuple[str, ...]] = {
    "Product2": ("Name",),
    "Knowledge__kav": ("Title",),
    "Account": ("Name", "FirstName", "LastName"),
    "Contact": ("Name", "FirstName", "LastName"),
    "Case": ("Subject",),
}
"""Fields searched by SOSL ``IN NAME FIELDS``."""

EMAIL_FIELDS: dict[str, tuple[str, ...]] = {"Account": ("PersonEmail",), "Contact": ("Email",)}
PHONE_FIELDS: dict[str, tuple[str, ...]] = {"Account": ("Phone",)}

CATEGORY_NEEDS: dict[str, dict[str, tuple[str, ...]]] = {
    "NCR": {
        "Issue__c": ("Id", "Name"),
        "Product2": ("Id", "Name"),
        "Case": ("Id", "OwnerId", "Status", "IssueId__c", "OrderItemId__c"),
        "OrderItem": ("Id", "Product2Id"),
        "User": ("Id",),
    },
    "HTU": {
        "CaseHistory__c": ("Id", "CaseId__c", "Field__c", "NewValue__c", "CreatedDate"),
        "Case": ("Id", "OwnerId", "Status", "CreatedDate", "ClosedDate"),
        "User": ("Id",),
    },
    "TCU": {
        "CaseHistory__c": ("Id", "CaseId__c", "Field__c", "OldValue__c", "NewValue__c", "CreatedDate"),
        "Case": ("Id", "CreatedDate"),
        "User": ("Id",),
    },
    "NED": {
        "Product2": ("Id", "Name"),
        "Contact": ("Id", "AccountId"),
        "Order": ("Id", "AccountId", "EffectiveDate", "Status"),
        "OrderItem": ("Id", "OrderId", "Product2Id"),
        "Account": ("Id",),
    },
    "PVI": {
        "Case": ("Id",),
        "LiveChatTranscript": ("Id", "CaseId", "Body"),
        "EmailMessage": ("Id", "ParentId", "Subject", "TextBody"),
        "Knowledge__kav": ("Id", "Title", "FAQ_Answer__c", "PublishStatus", "Language"),
    },
    "KQA": {"Knowledge__kav": ("Id", "Title", "FAQ_Answer__c", "PublishStatus", "Language")},
    "TII": {
        "Product2": ("Id", "Name"),
        "OrderItem": ("Id", "Product2Id"),
        "Case": ("Id", "IssueId__c", "OrderItemId__c", "CreatedDate"),
        "Issue__c": ("Id",),
    },
    "MTA": {
        "Product2": ("Id", "Name"),
        "OrderItem": ("Id", "Product2Id"),
        "Case": ("Id", "OrderItemId__c", "CreatedDate"),
    },
    "BRI": {
        "Case": ("Id", "AccountId", "Status", "CreatedDate", "ClosedDate"),
        "Account": ("Id", "ShippingState"),
    },
}
"""Per category (paper abbreviation): object -> the fields its task generation and reference
solution read (`data.py`, `reference.py`). A user's export that lacks one of them cannot run
that category: loading it for the category is a usage error naming the table and columns."""

ORIGINAL_LAYOUT_DEFAULTS: dict[tuple[str, str], str] = {
    ("Knowledge__kav", "PublishStatus"): "Online",
    ("Knowledge__kav", "Language"): "en_US",
}
"""Columns of our layout that the original org's schema export lacks, and the value an export
without them maps to. Salesforce only lets a Knowledge__kav query without an Id filter through
with a ``PublishStatus`` filter, and the original org is English-only, so an export of it holds
the published ``en_US`` versions the original tools query for."""

PICKLIST_VALUES: dict[str, dict[str, frozenset[str]]] = {
    "Case": {
        "Status": frozenset({"New", "Working", "Escalated", "Closed"}),
        "Priority": frozenset({"Low", "Medium", "High", "Critical"}),
    },
    "Order": {"Status": frozenset({"Draft", "Activated"})},
    "CaseHistory__c": {"Field__c": frozenset({"Case Creation", "Owner Assignment", "Case Closed"})},
    "Knowledge__kav": {"PublishStatus": frozenset({"Online", "Draft", "Archived"})},
}
"""Allowed values of the picklists the tasks filter on (Salesforce's defaults for Case and
Order, the original org's for CaseHistory__c). A value outside them would silently fall out of
every filter (a 'closed' case that is not ``Closed``), so an export holding one is refused."""


def _required_fields() -> dict[str, tuple[str, ...]]:
    required: dict[str, tuple[str, ...]] = {}
    for object_name in OBJECTS:
        fields = {"Id": None}
        for needs in CATEGORY_NEEDS.values():
            fields.update(dict.fromkeys(needs.get(object_name, ())))
        for obj, name in ORIGINAL_LAYOUT_DEFAULTS:
            if obj == object_name:
                fields.pop(name, None)
        required[object_name] = tuple(f for f in OBJECTS[object_name] if f in fields)
    return required


REQUIRED_FIELDS: dict[str, tuple[str, ...]] = _required_fields()
"""Columns a user's SQLite export must have for all nine categories: the union of
`CATEGORY_NEEDS`, less the columns `ORIGINAL_LAYOUT_DEFAULTS` fills in.

Other fields of `OBJECTS` that an export lacks are added as empty (NULL) columns on load."""


def field_type(object_name: str, field: str) -> str:
    """Salesforce type of ``object_name.field`` (``string`` when not listed in FIELD_TYPES)."""
    return FIELD_TYPES.get(object_name, {}).get(field, "string")
